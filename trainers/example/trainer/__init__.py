"""Example trainer: `python -m trainer.task --job-dir gs://BUCKET/jobs/NAME [...]`."""
