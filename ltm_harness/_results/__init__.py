"""Results: per test, dataset, agent and run, derived from the event log."""
