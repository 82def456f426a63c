"""One module per Google training API; `get_backend(name)` picks one by its stack setting name.

Importing this package imports neither googleapiclient nor pulumi (render and validate stay light).
"""

from __future__ import annotations

from typing import Any

from components.backends.base import JOB_LABEL, Backend, label_value
from components.spec import Job

NAMES = ("ai-platform", "vertex")
DEFAULT = "vertex"


def get_backend(name: str) -> Backend:
    if name == "ai-platform":
        from components.backends.ml_v1 import MlV1Backend

        return MlV1Backend()
    if name == "vertex":
        from components.backends.vertex import VertexBackend

        return VertexBackend()
    raise ValueError(f"unknown backend {name!r}; allowed: {', '.join(NAMES)}")


def job_labels(job: Job, job_id: str) -> dict[str, str]:
    """The labels a job is created with: the user's, plus the one that finds it again after a lost answer."""
    return {**(job.labels or {}), JOB_LABEL: label_value(job_id)}


def render_body(job: Job, backend: str, job_id: str | None = None) -> dict[str, Any]:
    """The exact request body `backend` would send for a validated job (SpecError if it cannot)."""
    job_id = job_id or job.job_id or "job"
    return get_backend(backend).render(job, job_id, job_labels(job, job_id))
