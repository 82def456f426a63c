"""`python -m gcp_training_jobs validate | render | plan | emulator | ...`: the `gcp-training-jobs` command."""

from gcp_training_jobs.cli.main import entry

entry()
