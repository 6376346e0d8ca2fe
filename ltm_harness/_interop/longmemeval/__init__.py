"""LongMemEval (Wu et al., ICLR 2025): its data files read incrementally (`data`, on `stream`), fetched on first
use (`fetch`), its scoring without a judge and its metrics (`scoring`), our judge prompts per kind of question
(`judge`), and the reference's own prompts read from a checkout the user names (`reference_prompts`). No engine
dependency: the dataset built on these lives with the datasets."""
