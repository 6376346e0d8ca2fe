import sys

from ltm_harness.cli import main

sys.exit(main())
