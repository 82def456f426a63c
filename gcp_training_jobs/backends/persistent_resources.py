"""Vertex AI persistent resources as the client reads them (aiplatform v1, projects.locations.persistentResources
get and list, through the one transport): whether a job's `persistentResourceId` names a resource that exists, is
RUNNING in the job's project and region and has pools the job fits (`plan --online`, the provider's check), and a
stack's resources for `status`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.vertex import regional_endpoint
from gcp_training_jobs.jobspec.rules.persistent import fit_problems
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts, api_facts

#: The state a job can run on (PersistentResource.State: PROVISIONING, RUNNING, STOPPING, ERROR, REBOOTING, UPDATING).
RUNNING = "RUNNING"


def _collection(endpoint: str) -> Any:
    return transport.collection(transport.service("aiplatform", "v1", endpoint), "projects", "locations",
                                "persistentResources")


def resource_name(project: str, region: str, resource_id: str) -> str:
    return f"projects/{project}/locations/{region}/persistentResources/{resource_id}"


def get(project: str, region: str, resource_id: str, endpoint: str | None = None) -> dict[str, Any] | None:
    """persistentResources.get: the resource, or None when there is none (404)."""
    at = regional_endpoint(region, endpoint)
    name = resource_name(project, region, resource_id)
    try:
        answer = transport.call(lambda: _collection(at).get(name=name), at, "persistentResources.get")
    except transport.ApiError as error:
        if error.status == 404:
            return None
        raise
    return dict(answer)


def list_resources(project: str, region: str, endpoint: str | None = None) -> list[dict[str, Any]]:
    """persistentResources.list: every resource of the project in `region`, all pages."""
    at = regional_endpoint(region, endpoint)
    parent = f"projects/{project}/locations/{region}"
    answers = transport.pages(lambda page: _collection(at).list(parent=parent, pageToken=page), at,
                              "persistentResources.list")
    return [resource for answer in answers for resource in answer.get("persistentResources") or []]


@dataclass(frozen=True)
class Looked:
    """What persistentResources.get said of a resource a job names: why no job can run on it (none there, not
    RUNNING), else None; and its pools as facts (None when it is unusable or its pools cannot be read)."""

    why_not: str | None
    held: ResourceFacts | None = None


def look_up(project: str, region: str, resource_id: str, endpoint: str | None = None) -> Looked:
    """The resource `resource_id` in the job's project and `region`, read once. An API error or a lost connection is
    raised (transport.ApiError, transport.TransportError)."""
    found = get(project, region, resource_id, endpoint)
    name = resource_name(project, region, resource_id)
    if found is None:
        return Looked(f"persistent resource {name} does not exist; allowed: the id of a RUNNING persistent resource "
                      "in the job's project and region, or one the stack declares (gcp-training-jobs:"
                      "persistentResources)")
    state = str(found.get("state") or "STATE_UNSPECIFIED")
    if state != RUNNING:
        return Looked(f"persistent resource {name} is {state}; allowed: a RUNNING one (Vertex AI refuses a job on a "
                      "resource that is not RUNNING)")
    return Looked(None, api_facts(resource_id, found, region))


def why_not(job: JobFacts, looked: Looked, prefix: str) -> str | None:
    """Why `job` cannot run on the resource looked up: it is unusable, or a pool of the job fits none of its pools
    (Vertex's fit rule, rules.persistent; each named at `prefix` + the pool's path), else None."""
    if looked.why_not is not None or looked.held is None:
        return looked.why_not
    misfits = [f"{p.path}: {p.message}" for p in fit_problems(job, looked.held, prefix)]
    return "; ".join(misfits) or None
