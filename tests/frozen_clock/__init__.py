"""Tests of what reads a job's timeline (logs, status, spend) on the emulator's frozen clock."""
