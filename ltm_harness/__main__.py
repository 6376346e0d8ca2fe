import sys

from ltm_harness._cli.main import main

sys.exit(main())
