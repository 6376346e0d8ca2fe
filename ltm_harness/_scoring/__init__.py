"""Scoring: rule helpers for datasets, and what an LLM judge returns."""
