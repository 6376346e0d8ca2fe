"""The LLM layer: one resilient OpenAI-compatible client for agents, the judge, dataset generation and
dynamic tests; prices and cost accounting; a disk cache; the mock server used offline."""
