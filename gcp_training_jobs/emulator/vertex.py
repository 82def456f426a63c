"""The Vertex AI v1 (aiplatform.googleapis.com) custom jobs surface: projects.locations.customJobs
create / get / list / cancel / delete and the operations.get of the delete operations it answers; and what
the hyperparameter tuning jobs surface (vertex_tuning) shares with it: the JSON and delete. The checks of a
create are `vertex_checks` (a tuning job's trialJobSpec is a CustomJobSpec too)."""

from __future__ import annotations

import copy
import re
from typing import Any

from gcp_training_jobs.emulator import capacity, persistent, reservations, vertex_checks
from gcp_training_jobs.emulator.errors import ApiError, failed_precondition
from gcp_training_jobs.emulator.jobs import Job, Vocabulary, rfc3339, same_project
from gcp_training_jobs.emulator.routing import ITEM, Handler, Route, collection_path, job_routes, resource_pattern
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import vertex_fields

_SCHEMA = "GoogleCloudAiplatformV1CustomJob"


def render(job: Job) -> dict[str, Any]:
    """The job's JSON as the real API answers it (user fields echoed as received)."""
    out: dict[str, Any] = {"name": job.name}
    out.update(copy.deepcopy(job.body))
    out.update(job.status(update_time=True))
    if job.state in ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED") and job.error_message:
        out["error"] = {"code": job.error_code, "message": job.error_message}
    return out


def _display_name(job: Job) -> str | None:
    value = job.body.get("displayName")
    return value if isinstance(value, str) else None


VERTEX = Vocabulary(
    api="aiplatform", parent="projects/{project}/locations/{location}", collection="customJobs",
    prefix="JOB_STATE_", phases=("QUEUED", "PENDING", "RUNNING"), page_sizes=(100, 1000),
    messages=("The replica workerpool0-0 exited with a non-zero status of 1.", "CANCELED"),
    not_found="CustomJob {name} not found.",
    filter_fields={"display_name": _display_name, "displayName": _display_name}, render=render, kind="CustomJob",
    schema=_SCHEMA, list_schema="GoogleCloudAiplatformV1ListCustomJobsResponse",
)


def create(state: EmulatorState, project: str, location: str, body: Any) -> dict[str, Any]:
    """projects.locations.customJobs.create: Vertex's checks (`vertex_checks`), the persistent resource it names (it
    must exist, run and fit the job: `persistent.check_job`), the reservations it consumes (`reservations.check_job`),
    the quota limits (a 429 naming the metrics over them; a
    job on a persistent resource holds none), server-assigned id, QUEUED job answered."""
    user, judged = vertex_fields(body, _SCHEMA, strict_int64=state.strict_int64)
    found = vertex_checks.Found()
    vertex_checks.check_named(judged, "", found)
    vertex_checks.check_job_spec(judged.get("jobSpec"), "job_spec", found)
    found.raise_if_any()
    vertex_checks.check_machines(judged["jobSpec"], "job_spec", location)
    with state.lock:
        persistent.check_job(state, project, location, judged["jobSpec"], "job_spec")
        reservations.check_job(state, project, location, judged["jobSpec"], "job_spec")
        refused = state.quota_refusal(project, location, capacity.needs(user))  # over a limit: refused at once
        if refused is not None:
            raise ApiError(429, refused, "RESOURCE_EXHAUSTED")
        return render(state.add_job(VERTEX, project, location, state.next_id(), user))


def delete(state: EmulatorState, vocab: Vocabulary, project: str, location: str, job_id: str) -> dict[str, Any]:
    """projects.locations.{customJobs,hyperparameterTuningJobs}.delete: a done Operation; unfinished jobs must
    be cancelled first."""
    with state.lock:
        job = state.find_job(vocab, project, location, job_id)
        if job.state not in vocab.finished:
            raise failed_precondition(
                f"{vocab.kind} {job.name} is in state {job.state} and cannot be deleted: it must be "
                "cancelled first (only finished jobs can be deleted)."
            )
        state.remove_job(job)
        now = rfc3339(state.now())
        return state.save_operation(
            {
                "name": f"projects/{project}/locations/{location}/operations/{state.next_id()}",
                "metadata": {
                    "@type": "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata",
                    "genericMetadata": {"createTime": now, "updateTime": now},
                },
                "done": True,
                "response": {"@type": "type.googleapis.com/google.protobuf.Empty"},
            }
        )


def get_operation(state: EmulatorState, project: str, location: str, operation_id: str) -> dict[str, Any]:
    """projects.locations.operations.get (the operations returned by delete)."""

    def match(name: str) -> bool:
        _, p, _, loc, _, op_id = name.split("/")
        return op_id == operation_id and loc == location and same_project(project, p)

    operation = state.find_operation(match)
    if operation is None:
        raise ApiError(
            404, f"Operation projects/{project}/locations/{location}/operations/{operation_id} not found.", "NOT_FOUND"
        )
    return operation


def vertex_routes(vocab: Vocabulary, create: Handler) -> list[Route]:
    """create, list, get, cancel and delete of a Vertex AI job collection (create is the collection's own)."""
    return [
        *job_routes(vocab, create),
        Route(
            "DELETE",
            re.compile(collection_path(vocab) + ITEM + "$"),
            f"{vocab.collection}.delete",
            lambda s, r: delete(s, vocab, r.project, r.location, r.job),
        ),
    ]


ROUTES: list[Route] = [
    *vertex_routes(VERTEX, lambda s, r: create(s, r.project, r.location, r.body)),
    Route(
        "GET",
        re.compile(resource_pattern(VERTEX.parent) + r"/operations/(?P<o>[^/:]+)$"),
        "operations.get",
        lambda s, r: get_operation(s, r.project, r.location, r.params["o"]),
    ),
]
