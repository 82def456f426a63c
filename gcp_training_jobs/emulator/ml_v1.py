"""The AI Platform Training v1 (ml.googleapis.com) surface: projects.getConfig and projects.jobs
create / get / list / patch / cancel, with the create-time checks the real service applies."""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from typing import Any

from gcp_training_jobs.emulator.errors import ApiError, invalid
from gcp_training_jobs.emulator.jobs import Job, Vocabulary, project_number
from gcp_training_jobs.emulator.routing import ITEM, Route, collection_path, job_routes, resource_pattern
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import check_labels, int_value, user_fields, validated

_SCHEMA = "GoogleCloudMlV1__Job"
_JOB_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,127}$")
_EXTRA_OUTPUT = frozenset({"trainingOutput", "predictionOutput", "etag"})


def _etag(job: Job) -> str:
    """A base64 etag that changes with every change of the job (state, labels)."""
    digest = hashlib.sha256(f"{job.name}#{job.seq}#{job.revision}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def _render(job: Job) -> dict[str, Any]:
    """The Job JSON as the real API answers it (user fields echoed as received)."""
    out = copy.deepcopy(job.body)
    out.update(job.status(update_time=False))
    if job.state in ("FAILED", "CANCELLED") and job.error_message:
        out["errorMessage"] = job.error_message
    if job.state == "SUCCEEDED":
        out["trainingOutput"] = {"consumedMLUnits": 1.5}
    out["etag"] = _etag(job)
    return out


def _job_id(job: Job) -> str | None:
    return job.job_id


ML = Vocabulary(
    api="ml", parent="projects/{project}", collection="jobs", page_sizes=(20, 100),
    prefix="", phases=("QUEUED", "PREPARING", "RUNNING"),
    messages=("The replica master 0 exited with a non-zero status of 1.", "Job cancelled by the user."),
    not_found="Field: name Error: Job {name} not found.",
    filter_fields={"jobId": _job_id, "job_id": _job_id}, render=_render,
    schema="GoogleCloudMlV1__Job", list_schema="GoogleCloudMlV1__ListJobsResponse",
)


def get_config(state: EmulatorState, project: str) -> dict[str, Any]:
    """projects.getConfig: the service accounts AI Platform uses in this project."""
    number = project_number(project)
    return {
        "serviceAccount": f"service-{number}@cloud-ml.google.com.iam.gserviceaccount.com",
        "serviceAccountProject": number,
        "config": {"tpuServiceAccount": f"service-{number}@cloud-tpu.iam.gserviceaccount.com"},
    }


def create(state: EmulatorState, project: str, body: Any) -> dict[str, Any]:
    """projects.jobs.create: validate like the real API, store, answer the QUEUED job."""
    user = user_fields(body, "ml", _SCHEMA, strict_int64=state.strict_int64, output_only=_EXTRA_OUTPUT)
    job_id = user.get("jobId")
    if not job_id:
        raise invalid("Field: job_id Error: A job id must be specified.", "job_id")
    if not _JOB_ID_RE.match(job_id):
        raise invalid(
            "Field: job_id Error: A name should start with a letter and contain only letters, numbers "
            "and underscores (at most 128 characters).",
            "job_id",
        )
    check_labels(user.get("labels"), "labels")
    training = user.get("trainingInput")
    if not isinstance(training, dict):
        raise invalid("Field: training_input Error: A training input must be specified.", "training_input")
    _check_training_input(training)
    with state.lock:
        if state.has_job(ML, project, job_id):
            raise ApiError(
                409,
                f"Resource in projects [{project}] is the subject of a conflict: Field: job.job_id "
                "Error: A job with this id already exists.",
                "ALREADY_EXISTS",
            )
        return _render(state.add_job(ML, project, "", job_id, user))


def patch(state: EmulatorState, project: str, job_id: str, update_mask: str | None, body: Any) -> dict[str, Any]:
    """projects.jobs.patch: only `labels` (and `etag`) may be in the mask; stale etag -> 409 ABORTED."""
    body = validated(body, "ml", _SCHEMA, strict_int64=state.strict_int64)
    paths = [p.strip() for p in (update_mask or "").split(",") if p.strip()]
    if not paths:
        raise invalid("Field: update_mask Error: An update mask must be specified.", "update_mask")
    unsupported = [p for p in paths if p not in ("labels", "etag")]
    if unsupported:
        raise invalid(
            f"Field: update_mask Error: Unsupported update mask path(s) {', '.join(unsupported)}; "
            "currently the only supported update masks are labels and etag.",
            "update_mask",
        )
    with state.lock:
        job = state.find_job(ML, project, "", job_id)
        etag = body.get("etag")
        if etag is not None and etag != _etag(job):
            raise ApiError(
                409, f"etag mismatch: job {job.name} has been modified since the etag was read.", "ABORTED"
            )
        if "labels" in paths:
            labels = body.get("labels") or {}
            check_labels(labels, "labels")
            if labels != job.labels:
                if labels:
                    job.body["labels"] = copy.deepcopy(labels)
                else:
                    job.body.pop("labels", None)
                state.touch(job)
        return _render(job)


ROUTES: list[Route] = [
    Route(
        "GET",
        re.compile(resource_pattern(ML.parent) + ":getConfig$"),
        "projects.getConfig",
        lambda s, r: get_config(s, r.project),
    ),
    *job_routes(ML, lambda s, r: create(s, r.project, r.body)),
    Route(
        "PATCH",
        re.compile(collection_path(ML) + ITEM + "$"),
        "jobs.patch",
        lambda s, r: patch(s, r.project, r.job, r.query.get("updateMask"), r.body),
        ("ml", "GoogleCloudMlV1__Job"),
    ),
]


def _check_training_input(training: dict[str, Any]) -> None:
    """The ml create checks beyond JSON shape that the project relies on."""
    if not training.get("region"):
        raise invalid("Field: training_input.region Error: A region must be specified.", "training_input.region")
    if training.get("scaleTier") == "CUSTOM" and not training.get("masterType"):
        raise invalid(
            "Field: training_input.master_type Error: A master type must be specified when the scale tier "
            "is CUSTOM.",
            "training_input.master_type",
        )
    master = training.get("masterConfig")
    has_image = isinstance(master, dict) and bool(master.get("imageUri"))
    if not has_image:
        if not training.get("pythonModule"):
            raise invalid(
                "Field: training_input.python_module Error: A python module (with package URIs) or "
                "masterConfig.imageUri must be specified.",
                "training_input.python_module",
            )
        if not training.get("packageUris"):
            raise invalid(
                "Field: training_input.package_uris Error: At least one package URI must be specified.",
                "training_input.package_uris",
            )
    for role in ("worker", "parameterServer", "evaluator"):
        count = int_value(training.get(f"{role}Count")) or 0
        if count < 0:
            raise invalid(f"Field: training_input.{role}_count Error: The count must not be negative.")
        if count > 0 and training.get("scaleTier") == "CUSTOM" and not training.get(f"{role}Type"):
            snake = re.sub(r"([A-Z])", r"_\1", role).lower()
            raise invalid(
                f"Field: training_input.{snake}_type Error: A {snake} type must be specified when "
                f"{snake}_count is positive.",
                f"training_input.{snake}_type",
            )
