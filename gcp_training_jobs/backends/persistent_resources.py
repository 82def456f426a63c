"""Vertex AI persistent resources as the client reads them (aiplatform v1, projects.locations.persistentResources
get and list, through the one transport): whether a job's `persistentResourceId` names a resource that exists and is
RUNNING in the job's project and region (`plan --online`), and a stack's resources for `status`."""

from __future__ import annotations

from typing import Any

from gcp_training_jobs.backends import transport

#: The state a job can run on (PersistentResource.State: PROVISIONING, RUNNING, STOPPING, ERROR, REBOOTING, UPDATING).
RUNNING = "RUNNING"


def _endpoint(region: str, endpoint: str | None) -> str:
    return endpoint or f"https://{region}-aiplatform.googleapis.com/"


def _collection(endpoint: str) -> Any:
    return transport.collection(transport.service("aiplatform", "v1", endpoint), "projects", "locations",
                                "persistentResources")


def resource_name(project: str, region: str, resource_id: str) -> str:
    return f"projects/{project}/locations/{region}/persistentResources/{resource_id}"


def get(project: str, region: str, resource_id: str, endpoint: str | None = None) -> dict[str, Any] | None:
    """persistentResources.get: the resource, or None when there is none (404)."""
    at = _endpoint(region, endpoint)
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
    at = _endpoint(region, endpoint)
    parent = f"projects/{project}/locations/{region}"
    found: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = token
        answer = transport.call(lambda: _collection(at).list(parent=parent, pageToken=page), at,  # noqa: B023
                                "persistentResources.list")
        found += list(answer.get("persistentResources") or [])
        token = answer.get("nextPageToken")
        if not token:
            return found


def unusable(project: str, region: str, resource_id: str, endpoint: str | None = None) -> str | None:
    """Why a job cannot run on persistent resource `resource_id` in `region` (none there, or not RUNNING), else
    None. An API error or a lost connection is raised (transport.ApiError, transport.TransportError)."""
    found = get(project, region, resource_id, endpoint)
    name = resource_name(project, region, resource_id)
    if found is None:
        return (f"persistent resource {name} does not exist; allowed: the id of a RUNNING persistent resource in "
                f"the job's project and region, or one the stack declares (gcp-training-jobs:persistentResources)")
    state = str(found.get("state") or "STATE_UNSPECIFIED")
    if state != RUNNING:
        return (f"persistent resource {name} is {state}; allowed: a RUNNING one (Vertex AI refuses a job on a "
                "resource that is not RUNNING)")
    return None
