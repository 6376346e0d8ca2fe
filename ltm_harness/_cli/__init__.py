"""The command line: `python -m ltm_harness COMMAND`, one module per command, live progress and tables."""
