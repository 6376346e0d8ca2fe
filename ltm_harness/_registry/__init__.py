"""Finding things by name: datasets, agents, environments, judge prompts, suites."""
