"""L2M-style lifelong-learning runs: syllabi of train/test phases played to an agent in one conversation,
logged in the l2logger format, and scored with the lifelong-learning metrics (docs/l2m.md)."""
