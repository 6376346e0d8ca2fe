"""Guards at the boundaries: what comes from outside (files, replies, configs, names) is bounded, checked and
cleaned here, each way once, before any other module uses it.

* `limits`: the default maximum of every count, size and time, and `clip` (an echo of input in an error line);
* `jsonsafe`: JSON parsed with its nesting depth bounded; `yamlsafe`: YAML without duplicate keys or alias bombs;
* `files`: the one check of a path a user names (a regular file, its size), before it is opened, never blocking;
* `redirects`: where a download may be redirected (docs/security.md);
* `names`: names and ids that become paths (a fixed safe alphabet and length), and paths kept inside their folder;
* `redact`: the one redaction of URLs and secrets, for every file and line written;
* `text`: lone surrogates replaced, spreadsheet formulas neutralised;
* `body`: a reply body read with a cap on its decoded size (decompression bounded).
"""
