"""Which vocabulary a document is written in, told by its top-level keys before any model is built, so that a
file imports (and builds) only the models of its own vocabulary.

- A tuning config (`gcloud ai hp-tuning-jobs create --config`): studySpec or trialJobSpec at the top (a stack's job
  and a `job` input enclose it under tuningJob).
- A CustomJobSpec (`gcloud ai custom-jobs create --config`): any field of Vertex AI's CustomJobSpec at the top,
  camelCase or snake_case (a snake_case file is recognised, then told to write camelCase), or a CustomJob request
  body (jobSpec), recognised so that it can be told what gcloud reads instead.
- Anything else is an ml v1 Job (trainingInput), AI Platform Training's vocabulary, which names what it misses.

The CustomJobSpec fields are those of aiplatform v1's CustomJobSpec (REST reference,
projects.locations.customJobs#CustomJobSpec), the fields of the model in vocab.custom_job:
tests/test_vocabulary.py holds the two together.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from gcp_training_jobs.jobspec.core.names import JOB_SPEC, TRAINING_INPUT, TUNING_JOB

Vocabulary = Literal["trainingInput", "customJobSpec", "tuning"]

#: The top-level fields of a CustomJobSpec, camelCase as gcloud and the JSON API read them.
CUSTOM_JOB_SPEC_FIELDS: Final = (
    "workerPoolSpecs", "scheduling", "serviceAccount", "network", "reservedIpRanges", "pscInterfaceConfig",
    "baseOutputDirectory", "protectedArtifactLocationId", "tensorboard", "enableWebAccess",
    "enableDashboardAccess", "experiment", "experimentRun", "models", "persistentResourceId",
)
#: The field of a tuning config holding its trials' CustomJobSpec.
TRIAL: Final = "trialJobSpec"
#: The top-level fields only a tuning config has.
TUNING_FIELDS: Final = ("studySpec", TRIAL)


def pool_path(index: int, single_pool: bool) -> str:
    """Where pool `index` of a CustomJobSpec was written (`workerPoolSpecs` when the pools were one mapping)."""
    return "workerPoolSpecs" if single_pool else f"workerPoolSpecs[{index}]"


def as_written(path: str, single_pool: bool) -> str:
    """`workerPoolSpecs[0].x` as the user wrote it: `workerPoolSpecs.x` when the pools were one mapping."""
    if single_pool and path.startswith("workerPoolSpecs[0]"):
        return "workerPoolSpecs" + path[len("workerPoolSpecs[0]"):]
    return path


def trial_path(path: str, single_pool: bool) -> str:
    """A path inside a tuning config's trial spec (`workerPoolSpecs[0].x`) as written in the file
    (`trialJobSpec....`)."""
    return f"{TRIAL}.{as_written(path, single_pool)}" if path else TRIAL


def snake_case(name: str) -> str:
    """`workerPoolSpecs` -> `worker_pool_specs`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_SPEC_KEYS: Final = frozenset(CUSTOM_JOB_SPEC_FIELDS) | {snake_case(k) for k in CUSTOM_JOB_SPEC_FIELDS}
_TUNING_KEYS: Final = frozenset(TUNING_FIELDS) | {snake_case(k) for k in TUNING_FIELDS}


def is_tuning_config(data: Any) -> bool:
    """Whether a document is a tuning config (top-level studySpec or trialJobSpec, or a stack's job enclosing one
    under tuningJob) rather than a CustomJobSpec or an ml v1 Job."""
    return isinstance(data, dict) and TRAINING_INPUT not in data \
        and (TUNING_JOB in data or not _TUNING_KEYS.isdisjoint(data))


def is_custom_job_spec(data: Any) -> bool:
    """Whether a document is written in Vertex AI's vocabulary: a CustomJobSpec (or, to be told what gcloud reads,
    a CustomJob request body with jobSpec) rather than an ml v1 Job with trainingInput."""
    if not isinstance(data, dict) or TRAINING_INPUT in data or snake_case(TRAINING_INPUT) in data:
        return False
    return JOB_SPEC in data or not _SPEC_KEYS.isdisjoint(data)


def vocabulary_of(data: Any) -> Vocabulary:
    """The vocabulary a document is written in (a tuning config before a CustomJobSpec: its trials are one)."""
    if is_tuning_config(data):
        return "tuning"
    return "customJobSpec" if is_custom_job_spec(data) else "trainingInput"


# --- An enclosed job (a stack's job, a TrainingJob's `job` input): its form under one key -------------------------

def is_spec(job: Any) -> bool:
    """Whether an enclosed job is written in Vertex AI's vocabulary (`jobSpec`, or a `tuningJob` whose trials run a
    CustomJobSpec), else it is a trainingInput."""
    return isinstance(job, Mapping) and (JOB_SPEC in job or TUNING_JOB in job)


def runs_spec(job: Any) -> Mapping[str, Any]:
    """The CustomJobSpec an enclosed job runs: its `jobSpec`, or its tuning config's trialJobSpec (each trial's);
    empty for a trainingInput."""
    if not isinstance(job, Mapping):
        return {}
    spec = job.get(JOB_SPEC) or (job.get(TUNING_JOB) or {}).get(TRIAL)
    return spec if isinstance(spec, Mapping) else {}


def written_region(job: Any) -> str:
    """Where an enclosed job asks to run, as written: its trainingInput.region, or the region beside its jobSpec or
    tuningJob ("" if not known)."""
    if not isinstance(job, Mapping):
        return ""
    where = (job.get(TRAINING_INPUT) or {}).get("region") if TRAINING_INPUT in job else job.get("region")
    return str(where) if isinstance(where, str) else ""
