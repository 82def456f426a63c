"""`python -m gcp_training_jobs.emulator`: the same as `python -m components emulator`."""

import sys

from gcp_training_jobs.emulator.cli import main

sys.exit(main())
