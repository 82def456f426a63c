"""`python -m components.emulator`: the same as `python -m components emulator`."""

import sys

from components.emulator.cli import main

sys.exit(main())
