"""BEAM (Tavakoli et al., ICLR 2026): its files fetched from the repository at a pinned commit (`fetch`, `pinned`),
its conversations streamed in every form they come in (`chat`), its probing questions and evidence (`probing`), its
scoring arithmetic ours and the reference's (`scoring`), our judge prompts (`judge`) and the reference's read from a
checkout (`reference_prompts`). No engine dependency: the `beam` dataset built on these lives with the datasets."""
