"""`python -m components validate | render | plan | emulator | ...` in a checkout: the `gcp-training-jobs` command."""

from gcp_training_jobs.cli.main import entry

entry()
