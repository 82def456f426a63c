"""Parse and judge a job: the one entry point from raw data to a validated job, in any vocabulary (an ml v1
Job with trainingInput, a Vertex AI CustomJobSpec, or a Vertex AI tuning config)."""

from __future__ import annotations

from datetime import date
from typing import Any

from components.jobspec.errors import SpecError
from components.jobspec.models import Job, parse_job
from components.jobspec.rules import Options, check_custom_job, check_job, check_tuning_job
from components.jobspec.tuning_models import TuningJob, parse_tuning_config
from components.jobspec.vertex_models import VertexJob, parse_custom_job_spec


def load_job(
    data: Any, *, default_region: str | None = None, partial: bool = False, package_supplied: bool = False,
    backend: str | None = None, today: date | None = None,
) -> Job:
    """Parse and judge a job: the one entry point for everything downstream.

    `default_region` fills trainingInput.region when the file leaves it to the command line (gcloud's
    --region). `partial` judges a gcloud config.yaml, whose module, package and runtime gcloud's flags may
    supply; `package_supplied` says the trainer package is built by the stack, so packageUris come later.
    `backend` "vertex" judges the job by Vertex AI's catalog (its translation: machine types of today,
    Vertex's regions, prebuilt containers and their dates) instead of AI Platform Training's; `today` is the
    day date rules judge against (default: $GCP_TRAINING_JOBS_TODAY, else the system's date).
    """
    job = parse_job(data)
    if job.training_input.region is None and default_region:
        job = job.model_copy(
            update={"training_input": job.training_input.model_copy(update={"region": default_region})}
        )
    problems = check_job(job, Options(partial=partial, package_supplied=package_supplied, backend=backend,
                                      today=today))
    if problems:
        raise SpecError(problems)
    return job


def load_custom_job(
    data: Any, *, region: str | None, region_at: str = "region", labels: dict[str, str] | None = None,
    job_id: str | None = None, today: date | None = None,
) -> VertexJob:
    """Parse and judge a CustomJobSpec (what `gcloud ai custom-jobs create --config FILE --region R` reads).

    `region` is the job's location (gcloud's --region, or the stack's), `region_at` where it was given, for
    messages; `labels` and `job_id` (the display name) come from the command line or the stack. SpecError
    carries every problem, each naming the path as the user wrote it.
    """
    spec, single = parse_custom_job_spec(data)
    job = VertexJob(spec, region=region, labels=labels, job_id=job_id, single_pool=single)
    problems = check_custom_job(job, Options(today=today), region_at=region_at)
    if problems:
        raise SpecError(problems)
    return job


def load_tuning_job(
    data: Any, *, region: str | None, region_at: str = "region", labels: dict[str, str] | None = None,
    job_id: str | None = None, today: date | None = None,
) -> TuningJob:
    """Parse and judge a tuning config (what `gcloud ai hp-tuning-jobs create --config FILE --region R` reads:
    studySpec, trialJobSpec, the trial counts). As in gcloud, `labels` (--labels) and `job_id` (--display-name)
    replace the file's labels and displayName when given. SpecError carries every problem, each naming the
    path as the user wrote it."""
    config, single = parse_tuning_config(data)
    job = TuningJob(config, region=region, labels=labels if labels is not None else config.labels,
                    job_id=job_id or config.display_name, single_pool=single)
    problems = check_tuning_job(job, Options(today=today), region_at=region_at)
    if problems:
        raise SpecError(problems)
    return job
