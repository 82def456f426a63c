"""A parsed Vertex AI document with what gcloud's flags or a stack add to it: light wrappers, no model built
here, so that the rules and the renderers can name them while a trainingInput file never imports (or builds)
the Vertex AI models (vocab.custom_job, vocab.tuning). The models never import this module: the imports go one
way (the paths as written live in io.vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.vocab.custom_job import CustomJobSpec
    from gcp_training_jobs.jobspec.vocab.tuning import TuningConfig

__all__ = ["TuningJob", "VertexJob"]


@dataclass(frozen=True)
class VertexJob:
    """A CustomJobSpec and what gcloud's flags or a stack add to it: the region (the URL's location, never
    part of the spec), the labels and the display name. `single_pool` records that the file wrote
    `workerPoolSpecs` as one mapping, so that problems name the paths as written."""

    spec: CustomJobSpec
    region: str | None = None
    labels: dict[str, str] | None = None
    job_id: str | None = None
    single_pool: bool = False


@dataclass(frozen=True)
class TuningJob:
    """A tuning config and what gcloud's flags or a stack add to it: the region (the URL's location), the
    labels and the display name (gcloud's --labels and --display-name replace the file's). `single_pool`
    records that trialJobSpec wrote `workerPoolSpecs` as one mapping, so problems name the paths as written."""

    config: TuningConfig
    region: str | None = None
    labels: dict[str, str] | None = None
    job_id: str | None = None
    single_pool: bool = False

    @property
    def trial(self) -> VertexJob:
        """The trials' CustomJobSpec as a Vertex job in the same region (judged by the CustomJobSpec rules)."""
        from gcp_training_jobs.jobspec.vocab.custom_job import CustomJobSpec  # built already: the config holds one

        return VertexJob(self.config.trial_job_spec or CustomJobSpec(), region=self.region,
                         single_pool=self.single_pool)

