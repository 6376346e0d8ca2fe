import sys

try:
    from ltm_harness._cli.main import main
except ModuleNotFoundError as exc:  # a Python without the harness's dependencies: one line, no traceback
    if not exc.name or exc.name.startswith("ltm_harness"):
        raise
    print(f"error: this Python ({sys.executable}) cannot import {exc.name.split('.')[0]!r}, which ltm-harness needs; "
          "start it with ./ltm in a checkout, or install ltm-harness into this Python", file=sys.stderr)
    sys.exit(2)

sys.exit(main())
