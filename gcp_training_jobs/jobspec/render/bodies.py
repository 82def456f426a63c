"""The request body each backend sends for a validated job: pure, so `render` and `validate` need no client.

ml v1 takes the job as written (a `Job`, hyperparameter tuning included); Vertex AI takes the translation in
vertex_body, a `CustomJob`, or, for a tuning job, a `HyperparameterTuningJob` (tuning_body): a trainingInput
with hyperparameters (its study translated, its trials' CustomJobSpec built by vertex_body) or a tuning config
written natively (studySpec and trialJobSpec, as `gcloud ai hp-tuning-jobs create --config` reads it). Every
body carries the user's labels plus the one label (names.JOB_LABEL) that finds a job again after a lost create
answer. `job_kind` says which Vertex resource a job is, so that one backend per resource can be chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, BACKENDS, JOB_LABEL, TRAINING, TUNING, VERTEX, label_value
from gcp_training_jobs.jobspec.core.problems import Problem, collapse_repeated, vertex_only
from gcp_training_jobs.jobspec.io.vocabulary import is_tuning_config
from gcp_training_jobs.jobspec.render.custom_job import custom_job_body, trial_job_spec
from gcp_training_jobs.jobspec.render.tuning import tuning_job_body
from gcp_training_jobs.jobspec.translate.pools import Pool
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job, job_body

#: A validated job in either training vocabulary: an ml v1 Job (trainingInput) or a Vertex AI CustomJobSpec.
AnyJob = Job | VertexJob
#: What can be rendered: either of those, or a Vertex AI tuning config (studySpec, trialJobSpec).
Renderable = Job | VertexJob | TuningJob



def ml_job_body(job: Renderable, job_id: str, labels: dict[str, str], *, pools: Sequence[Pool] = (),
                untranslated: Sequence[Problem] = ()) -> dict[str, Any]:
    """The ml v1 `Job` for projects.jobs.create (a CustomJobSpec or a tuning config has no ml v1 form): the model
    as written, so no pools (the keywords keep BODIES' one signature)."""
    if isinstance(job, VertexJob):
        raise SpecError([vertex_only("workerPoolSpecs")])
    if isinstance(job, TuningJob):
        raise SpecError([vertex_only("studySpec", tuning=True)])
    body = {k: v for k, v in job_body(job).items() if k != "jobId"}
    if labels:
        body["labels"] = labels
    return {"jobId": job_id, **body}


#: backend name -> (job, job id, labels) -> create request body (keyword `today` for the date rules) of a
#: training job; a tuning job's body on Vertex AI is tuning_body's.
BODIES: dict[str, Callable[..., dict[str, Any]]] = {
    AI_PLATFORM: ml_job_body,
    VERTEX: custom_job_body,
}


def job_kind(job: Any, backend: str | None = VERTEX) -> str:
    """TUNING for what is created as a Vertex AI HyperparameterTuningJob: a tuning config (parsed, or its
    mapping with top-level studySpec / trialJobSpec) on any backend, or a trainingInput with hyperparameters on
    Vertex AI (parsed, or its wire mapping, where the block may still be unknown at preview); else TRAINING
    (on ml v1 a tuning trainingInput is an ordinary Job)."""
    if isinstance(job, TuningJob) or is_tuning_config(job):
        return TUNING
    if backend != VERTEX:
        return TRAINING
    if isinstance(job, Job):
        return TUNING if job.training_input.hyperparameters is not None else TRAINING
    if isinstance(job, Mapping):
        ti = job.get("trainingInput", job.get("training_input"))
        if isinstance(ti, Mapping) and ti.get("hyperparameters") is not None:
            return TUNING
    return TRAINING


def tuning_body(job: Job | TuningJob | VertexJob, display_name: str, labels: dict[str, str], *,
                pools: Sequence[Pool], untranslated: Sequence[Problem] = ()) -> dict[str, Any]:
    """The Vertex AI HyperparameterTuningJob for a validated tuning job (aiplatform v1), or SpecError with
    everything Vertex cannot express: a tuning config as given (gcloud's defaults filled in), or a trainingInput's
    hyperparameters translated (tuning_body) around its CustomJobSpec translated (vertex_body)."""
    if isinstance(job, TuningJob):
        from gcp_training_jobs.jobspec.vocab.tuning import config_body  # imported already: job.config is its model

        return config_body(job.config, display_name, labels)
    hp = None if isinstance(job, VertexJob) else job.training_input.hyperparameters
    if isinstance(job, VertexJob) or hp is None:
        field = "workerPoolSpecs" if isinstance(job, VertexJob) else "trainingInput.hyperparameters"
        raise SpecError([Problem(field, "a hyperparameter tuning job needs a study; allowed: a trainingInput with "
                                 "hyperparameters, or a tuning config (studySpec and trialJobSpec)")])
    problems: list[Problem] = []
    trial: dict[str, Any] = {}
    try:
        trial = trial_job_spec(job, pools, untranslated)
    except SpecError as error:
        problems += error.problems
    ti = job.training_input
    kms = ti.encryption_config.kms_key_name if ti.encryption_config else None
    body: dict[str, Any] = {}
    try:
        body = tuning_job_body(hp, trial, display_name, labels,
                               {"kmsKeyName": kms} if kms else None)
    except SpecError as error:
        problems += error.problems
    if problems:
        raise SpecError(collapse_repeated(problems))
    return body


def job_labels(job: Renderable, job_id: str) -> dict[str, str]:
    """The labels a job is created with: the user's, plus the one that finds it again after a lost answer."""
    return {**(job.labels or {}), JOB_LABEL: label_value(job_id)}


def render_judged(job: Renderable, backend: str, job_id: str | None = None, *, pools: Sequence[Pool],
                  untranslated: Sequence[Problem] = ()) -> dict[str, Any]:
    """The exact request body `backend` would send for a validated job (SpecError if it cannot): on Vertex AI a
    HyperparameterTuningJob for a tuning job (`job_kind`), else a CustomJob. `pools`: the job's translation, as
    it was judged (load.Judged; `untranslated`: what did not translate). Rendering judges nothing: load does."""
    if backend not in BODIES:
        raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    job_id = job_id or job.job_id or "job"
    labels = job_labels(job, job_id)
    if backend == VERTEX and job_kind(job, backend) == TUNING:
        return tuning_body(job, job_id, labels, pools=pools, untranslated=untranslated)
    return BODIES[backend](job, job_id, labels, pools=pools, untranslated=untranslated)
