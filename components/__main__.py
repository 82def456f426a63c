"""`python -m components validate | render | plan | emulator`: see components.cli."""

from components.cli.main import entry

entry()
