"""Answers published by other tools (mem0's LoCoMo evaluation, LongMemEval's jsonl and .log) imported as runs of
their own, matched to the benchmark's questions and scored by the same rules (`import-answers`)."""
