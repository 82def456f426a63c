"""A parsed Vertex AI document with what gcloud's flags or a stack add to it: light wrappers, no model built
here, so that the rules and the renderers can name them while a trainingInput file never imports (or builds)
the Vertex AI models (vocab.custom_job, vocab.tuning).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from components.jobspec.io.vocabulary import TRIAL

if TYPE_CHECKING:
    from components.jobspec.vocab.custom_job import CustomJobSpec
    from components.jobspec.vocab.tuning import TuningConfig

__all__ = ["TRIAL", "TuningJob", "VertexJob", "as_written", "pool_path", "trial_path"]


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
        from components.jobspec.vocab.custom_job import CustomJobSpec  # built already: the config holds one

        return VertexJob(self.config.trial_job_spec or CustomJobSpec(), region=self.region,
                         single_pool=self.single_pool)


def pool_path(index: int, single_pool: bool) -> str:
    """Where pool `index` was written."""
    return "workerPoolSpecs" if single_pool else f"workerPoolSpecs[{index}]"


def as_written(path: str, single_pool: bool) -> str:
    """`workerPoolSpecs[0].x` as the user wrote it: `workerPoolSpecs.x` when the pools were one mapping."""
    if single_pool and path.startswith("workerPoolSpecs[0]"):
        return "workerPoolSpecs" + path[len("workerPoolSpecs[0]"):]
    return path


def trial_path(path: str, single_pool: bool) -> str:
    """A path inside the trial spec (`workerPoolSpecs[0].x`) as written in the file (`trialJobSpec....`)."""
    return f"{TRIAL}.{as_written(path, single_pool)}" if path else TRIAL
