"""`python -m components validate | render | plan | emulator`: see components.cli."""

import sys

from components.cli.main import main

sys.exit(main())
