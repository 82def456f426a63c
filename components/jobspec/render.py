"""The request body each backend sends for a validated job: pure, so `render` and `validate` need no client.

ml v1 takes the job as written (a `Job`); Vertex AI takes the translation in vertex_body. Both carry the
user's labels plus the one label (names.JOB_LABEL) that finds a job again after a lost create answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from components.jobspec.errors import SpecError
from components.jobspec.models import Job, job_body
from components.jobspec.names import AI_PLATFORM, BACKENDS, JOB_LABEL, VERTEX, label_value
from components.jobspec.problems import Problem
from components.jobspec.vertex_body import custom_job_body
from components.jobspec.vertex_models import VertexJob

#: A validated job in either vocabulary: an ml v1 Job (trainingInput) or a Vertex AI CustomJobSpec.
AnyJob = Job | VertexJob


def ml_job_body(job: AnyJob, job_id: str, labels: dict[str, str], *, today: date | None = None) -> dict[str, Any]:
    """The ml v1 `Job` for projects.jobs.create (a CustomJobSpec has no ml v1 form)."""
    if isinstance(job, VertexJob):
        raise SpecError([Problem("workerPoolSpecs", "a CustomJobSpec is Vertex AI's vocabulary and runs on Vertex "
                                 "AI only; allowed with backend ai-platform: a job with trainingInput")])
    body = {k: v for k, v in job_body(job).items() if k != "jobId"}
    if labels:
        body["labels"] = labels
    return {"jobId": job_id, **body}


#: backend name -> (job, job id, labels) -> create request body (keyword `today` for the date rules).
BODIES: dict[str, Callable[..., dict[str, Any]]] = {
    AI_PLATFORM: ml_job_body,
    VERTEX: custom_job_body,
}


def job_labels(job: AnyJob, job_id: str) -> dict[str, str]:
    """The labels a job is created with: the user's, plus the one that finds it again after a lost answer."""
    return {**(job.labels or {}), JOB_LABEL: label_value(job_id)}


def render_body(job: AnyJob, backend: str, job_id: str | None = None, *, today: date | None = None) -> dict[str, Any]:
    """The exact request body `backend` would send for a validated job (SpecError if it cannot). `today`: the
    day the date rules of a trainingInput's Vertex translation judge against (default: rules.today())."""
    if backend not in BODIES:
        raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    job_id = job_id or job.job_id or "job"
    return BODIES[backend](job, job_id, job_labels(job, job_id), today=today)
