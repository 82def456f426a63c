"""The command line: validate, render and plan (and the entry point of the emulator)."""
