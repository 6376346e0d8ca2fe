"""MemoryAgentBench (Hu, Wang and McAuley, arXiv 2507.05257): its four parquet splits fetched from the hub at a pinned
revision (`fetch`, `pinned`) and streamed row by row (`rows`), its sources and their families (`sources`), the
reference's chunking (`chunking`), the wrappers and query templates in their gist (`templates`; the reference's own
read from a checkout: `reference_prompts`), its scoring per source (`scoring`, `recsys`, `judges`) and its published
table (`published`). No engine dependency: the `memoryagentbench` dataset built on these lives with the datasets."""
