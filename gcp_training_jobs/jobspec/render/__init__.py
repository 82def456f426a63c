"""Stage 7, render: the exact request body a backend sends for a judged job (`bodies`), built from the one
translation (`custom_job` for a Vertex AI CustomJob, `tuning` for a HyperparameterTuningJob)."""
