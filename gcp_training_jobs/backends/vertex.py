"""Vertex AI custom training (aiplatform v1, projects.locations.customJobs): requests and answers.

The body is built by the pure translation in gcp_training_jobs.jobspec.render.custom_job; this module only knows how
to call the API and read what it returns.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Backend, Target, common_times, label_filter
from gcp_training_jobs.jobspec.core.names import (
    CANCELLED,
    CANCELLING,
    FAILED,
    JOB_LABEL,
    PAUSED,
    PREPARING,
    QUEUED,
    RUNNING,
    STATE_UNSPECIFIED,
    SUCCEEDED,
    VERTEX_SERVICE,
    label_value,
)

#: A custom job's page in the Google Cloud console, by the number that ends its resource name: as Google's Vertex AI
#: SDK links it (google-cloud-aiplatform 2.7.0, https://pypi.org/project/google-cloud-aiplatform/2.7.0/,
#: google/cloud/aiplatform/jobs.py `_Job._dashboard_uri`, `_job_type = "training"` on CustomJob; read 2026-11-26).
CONSOLE_URL: Final = "https://console.cloud.google.com/agent-platform/locations/{region}/{page}/{job}?project={project}"

#: Vertex AI's JobState onto the common vocabulary (core.names).
STATES = {
    "JOB_STATE_QUEUED": QUEUED,
    "JOB_STATE_PENDING": PREPARING,
    "JOB_STATE_RUNNING": RUNNING,
    "JOB_STATE_UPDATING": RUNNING,
    "JOB_STATE_PAUSED": PAUSED,
    "JOB_STATE_SUCCEEDED": SUCCEEDED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": SUCCEEDED,
    "JOB_STATE_FAILED": FAILED,
    "JOB_STATE_EXPIRED": FAILED,
    "JOB_STATE_CANCELLING": CANCELLING,
    "JOB_STATE_CANCELLED": CANCELLED,
}




def regional_endpoint(region: str, endpoint: str | None = None) -> str:
    """Vertex AI's endpoint in `region` (its jobs and persistent resources), else the override."""
    return endpoint or f"https://{region}-{VERTEX_SERVICE}/"


class VertexBackend(Backend):
    """Vertex AI custom jobs. A HyperparameterTuningJob lives in the same API with the same states, labels, list
    filter and delete-after-finish: its backend (vertex_tuning.py) is this one on another `collection`."""

    name: ClassVar[str] = "vertex"
    api: ClassVar[str] = "aiplatform"
    supports_label_update: ClassVar[bool] = False
    deletes_finished_jobs: ClassVar[bool] = True
    #: The API's collection of these jobs, which is also the list answer's field (ListCustomJobsResponse).
    collection: ClassVar[str] = "customJobs"
    #: The console's page of this kind of job, under the region (CONSOLE_URL).
    console_page: ClassVar[str] = "training"

    def _jobs(self, svc: Any) -> Any:
        """The jobs collection of the cached client (transport.collection: built once)."""
        return transport.collection(svc, "projects", "locations", self.collection)

    def endpoint(self, target: Target) -> str:
        return regional_endpoint(target.region, target.endpoint)

    def _parent(self, target: Target) -> str:
        return f"projects/{target.project}/locations/{target.region}"

    def create_request(self, svc: Any, target: Target, body: dict[str, Any]) -> Any:
        return self._jobs(svc).create(parent=self._parent(target), body=body)

    def get_request(self, svc: Any, name: str) -> Any:
        return self._jobs(svc).get(name=name)

    def cancel_request(self, svc: Any, name: str) -> Any:
        return self._jobs(svc).cancel(name=name, body={})

    def delete_request(self, svc: Any, name: str) -> Any:
        return self._jobs(svc).delete(name=name)

    def patch_labels_request(self, svc: Any, name: str, labels: dict[str, str], current: dict[str, Any]) -> Any:
        raise NotImplementedError("Vertex AI custom jobs cannot be patched; a label change replaces the job")

    def find_request(self, svc: Any, target: Target, job_id: str) -> Any:
        return self._jobs(svc).list(parent=self._parent(target), filter=label_filter({JOB_LABEL: label_value(job_id)}))

    def list_request(self, svc: Any, target: Target, labels: dict[str, str], page_token: str | None) -> Any:
        return self._jobs(svc).list(parent=self._parent(target), filter=label_filter(labels), pageToken=page_token)

    def listed(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        return list(answer.get(self.collection) or [])

    def found(self, answer: dict[str, Any], job_id: str) -> dict[str, Any] | None:
        wanted = label_value(job_id)
        return next((j for j in self.listed(answer) if (j.get("labels") or {}).get(JOB_LABEL) == wanted), None)

    def name_of(self, target: Target, job_id: str, resource: dict[str, Any] | None = None) -> str:
        if resource is None or "name" not in resource:
            raise ValueError("a Vertex AI job's name is assigned by the server")
        return str(resource["name"])

    def is_name(self, name: str) -> bool:
        return re.fullmatch(rf"projects/[^/]+/locations/[^/]+/{self.collection}/[^/]+", name) is not None

    def state(self, resource: dict[str, Any]) -> str:
        return STATES.get(str(resource.get("state")), STATE_UNSPECIFIED)

    def outputs(self, resource: dict[str, Any], target: Target) -> dict[str, Any]:
        job_number = str(resource.get("name", "")).rsplit("/", 1)[-1]
        return {
            **common_times(resource),
            "errorMessage": (resource.get("error") or {}).get("message"),
            "trainingOutput": None,
            "consoleUrl": CONSOLE_URL.format(region=target.region, page=self.console_page, job=job_number,
                                             project=target.project),
        }
