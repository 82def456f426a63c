"""The TrainingJob provider's import path in Pulumi state: every state pickles the provider by reference, as
`gcp_training_jobs.resources.job_provider.TrainingJobProvider`, and the engine imports it by that path to read and
delete its jobs. The class lives in gcp_training_jobs.resources.training_job.provider and names this module as its
own, so old and new states alike keep unpickling to it (and a state written now still reads under an older
release)."""

from gcp_training_jobs.resources.training_job.provider import TrainingJobProvider

__all__ = ["TrainingJobProvider"]
