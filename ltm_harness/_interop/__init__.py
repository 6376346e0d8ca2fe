"""Reading other benchmarks' files: the GoodAI LTM Benchmark's test definitions."""
