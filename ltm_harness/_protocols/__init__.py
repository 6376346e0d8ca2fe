"""Other benchmarks' protocols played on the same engine: AIQ runs, aiVLE suites, L2M syllabi."""
