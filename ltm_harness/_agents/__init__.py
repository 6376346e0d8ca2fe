"""Agents under test: the adapter interface, offline baselines, OpenAI-compatible chat models, HTTP agents,
replaying recorded turns, and agent specs."""
