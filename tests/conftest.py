"""Fixtures shared by every test module: the loopback emulator and Google's clients pointed at it."""

pytest_plugins = ["tests.conftest_emulator"]
