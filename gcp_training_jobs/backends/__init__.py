"""One module per Google training API (requests and answers), plus what they share: the transport (client,
TLS-only credentials, retries) and the lifecycle (create with reconciliation, wait, cancel).

`get_backend(name, kind)` picks one by its stack setting name and the kind of resource it creates (a training
job, or on Vertex AI a hyperparameter tuning job); `backend_for(name, job)` chooses the kind from the job itself.
Importing this package imports neither googleapiclient nor pulumi; it imports gcp_training_jobs.jobspec only.
"""

from __future__ import annotations

from typing import Any

from gcp_training_jobs.backends.base import Backend
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, BACKENDS, JOB_KINDS, TRAINING, TUNING, VERTEX
from gcp_training_jobs.jobspec.render.bodies import job_kind


def get_backend(name: str, kind: str = TRAINING) -> Backend:
    """The backend of API `name` for resources of `kind` (TRAINING: ml v1 jobs, Vertex custom jobs; TUNING:
    Vertex hyperparameter tuning jobs)."""
    if kind not in JOB_KINDS:
        raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(JOB_KINDS)}")
    if kind == TUNING:
        if name != VERTEX:
            raise ValueError(f"a hyperparameter tuning job of its own is a Vertex AI resource; backend {name!r} "
                             f"tunes inside a training job (trainingInput.hyperparameters); allowed: {VERTEX}")
        from gcp_training_jobs.backends.vertex_tuning import VertexTuningBackend

        return VertexTuningBackend()
    if name == AI_PLATFORM:
        from gcp_training_jobs.backends.ml_v1 import MlV1Backend

        return MlV1Backend()
    if name == VERTEX:
        from gcp_training_jobs.backends.vertex import VertexBackend

        return VertexBackend()
    raise ValueError(f"unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")


def backend_for(name: str, job: Any) -> Backend:
    """The backend that creates `job` on API `name`: on Vertex AI a HyperparameterTuningJob for a trainingInput
    with hyperparameters or a tuning config (studySpec, trialJobSpec), else the API's training job. `job` is a
    parsed job (load_job, load_custom_job, load_tuning_job) or its wire mapping (the provider's `job` input)."""
    return get_backend(name, job_kind(job, name))
