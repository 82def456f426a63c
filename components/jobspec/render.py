"""The request body each backend sends for a validated job: pure, so `render` and `validate` need no client.

ml v1 takes the job as written (a `Job`); Vertex AI takes the translation in vertex_body. Both carry the
user's labels plus the one label (names.JOB_LABEL) that finds a job again after a lost create answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.jobspec.models import Job, job_body
from components.jobspec.names import AI_PLATFORM, BACKENDS, JOB_LABEL, VERTEX, label_value
from components.jobspec.vertex_body import custom_job_body


def ml_job_body(job: Job, job_id: str, labels: dict[str, str]) -> dict[str, Any]:
    """The ml v1 `Job` for projects.jobs.create."""
    body = {k: v for k, v in job_body(job).items() if k != "jobId"}
    if labels:
        body["labels"] = labels
    return {"jobId": job_id, **body}


#: backend name -> (job, job id, labels) -> create request body.
BODIES: dict[str, Callable[[Job, str, dict[str, str]], dict[str, Any]]] = {
    AI_PLATFORM: ml_job_body,
    VERTEX: custom_job_body,
}


def job_labels(job: Job, job_id: str) -> dict[str, str]:
    """The labels a job is created with: the user's, plus the one that finds it again after a lost answer."""
    return {**(job.labels or {}), JOB_LABEL: label_value(job_id)}


def render_body(job: Job, backend: str, job_id: str | None = None) -> dict[str, Any]:
    """The exact request body `backend` would send for a validated job (SpecError if it cannot)."""
    if backend not in BODIES:
        raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    job_id = job_id or job.job_id or "job"
    return BODIES[backend](job, job_id, job_labels(job, job_id))
