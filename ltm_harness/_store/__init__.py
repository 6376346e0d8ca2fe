"""The run folder on disk: layout and file names, event log, formats and versions, atomic writes."""
