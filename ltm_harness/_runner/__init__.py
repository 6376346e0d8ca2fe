"""A run: config, definitions, run modes, one session per agent, results on disk."""
