"""Writing tests: the dataset interface, scripted examples and their waits, GPT-generated datasets from prompt
files, and test definitions on disk."""
