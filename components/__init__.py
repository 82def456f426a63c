"""This checkout's own side of the library: `python -m components ...` runs the command line from a checkout, and
`components.resources.job_provider` is the path states deployed before the library became `gcp_training_jobs`
pickled the TrainingJob provider under. The library itself is `gcp_training_jobs` (what the wheel installs); nothing
here is installed."""
