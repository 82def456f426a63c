"""Parse and judge a job: the one entry point from raw data to a validated Job."""

from __future__ import annotations

from typing import Any

from components.jobspec.errors import SpecError
from components.jobspec.models import Job, parse_job
from components.jobspec.rules import Options, check_job


def load_job(
    data: Any, *, default_region: str | None = None, partial: bool = False, package_supplied: bool = False
) -> Job:
    """Parse and judge a job: the one entry point for everything downstream.

    `default_region` fills trainingInput.region when the file leaves it to the command line (gcloud's
    --region). `partial` judges a gcloud config.yaml, whose module, package and runtime gcloud's flags may
    supply; `package_supplied` says the trainer package is built by the stack, so packageUris come later.
    """
    job = parse_job(data)
    if job.training_input.region is None and default_region:
        job = job.model_copy(
            update={"training_input": job.training_input.model_copy(update={"region": default_region})}
        )
    problems = check_job(job, Options(partial=partial, package_supplied=package_supplied))
    if problems:
        raise SpecError(problems)
    return job
