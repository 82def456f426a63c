"""The TrainingJob provider under the path states deployed before the library became `gcp_training_jobs` pickled it
(`components.resources.job_provider.TrainingJobProvider`): the engine imports it by that path to read and delete their
jobs until a `pulumi up` records the new path (`gcp_training_jobs.resources.job_provider`). Kept in this checkout,
never installed: a team that installed an earlier wheel runs one `pulumi up` after upgrading (docs/recovery-and-
security.md, "Upgrading from a wheel that installed `components`")."""

from gcp_training_jobs.resources.job_provider import TrainingJobProvider

__all__ = ["TrainingJobProvider"]
