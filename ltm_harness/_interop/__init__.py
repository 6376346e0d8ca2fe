"""Reading other benchmarks' files: the GoodAI LTM Benchmark's test definitions; LongMemEval's data, scoring and judge
prompts (`longmemeval/`)."""
