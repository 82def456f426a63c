"""AI Platform Training v1 (ml.googleapis.com): the API of its GPU and TPU guides. Shut down by Google on 2025-01-31;
kept for the emulator, for history, and for anyone holding an exemption."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Backend, Target, common_times, label_filter
from gcp_training_jobs.jobspec.core.names import STATE_UNSPECIFIED

#: A job's page in the Google Cloud console, as gcloud links it after `gcloud ai-platform jobs describe` (Google
#: Cloud CLI 528.0.0, https://cloud.google.com/sdk/docs/install, lib/googlecloudsdk/command_lib/ml_engine/
#: jobs_util.py `_CONSOLE_URL`; read 2026-11-26).
CONSOLE_URL: Final = "https://console.cloud.google.com/mlengine/jobs/{job}?project={project}"

ENDPOINT = "https://ml.googleapis.com/"



def _collection(svc: Any) -> Any:
    """The jobs collection of the cached client (transport.collection: built once)."""
    return transport.collection(svc, "projects", "jobs")

class MlV1Backend(Backend):
    name: ClassVar[str] = "ai-platform"
    api: ClassVar[str] = "ml"
    conflict_means_exists: ClassVar[bool] = True

    def endpoint(self, target: Target) -> str:
        return target.endpoint or ENDPOINT

    def create_request(self, svc: Any, target: Target, body: dict[str, Any]) -> Any:
        return _collection(svc).create(parent=f"projects/{target.project}", body=body)

    def get_request(self, svc: Any, name: str) -> Any:
        return _collection(svc).get(name=name)

    def cancel_request(self, svc: Any, name: str) -> Any:
        return _collection(svc).cancel(name=name, body={})

    def patch_labels_request(self, svc: Any, name: str, labels: dict[str, str], current: dict[str, Any]) -> Any:
        body: dict[str, Any] = {"labels": labels}
        if current.get("etag"):
            body["etag"] = current["etag"]
        return _collection(svc).patch(name=name, updateMask="labels", body=body)

    def find_request(self, svc: Any, target: Target, job_id: str) -> Any:
        return self.get_request(svc, self.name_of(target, job_id))

    def found(self, answer: dict[str, Any], job_id: str) -> dict[str, Any] | None:
        return answer if answer.get("jobId") == job_id else None

    def list_request(self, svc: Any, target: Target, labels: dict[str, str], page_token: str | None) -> Any:
        return _collection(svc).list(parent=f"projects/{target.project}", filter=label_filter(labels),
                                          pageToken=page_token)

    def listed(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        return list(answer.get("jobs") or [])

    def name_of(self, target: Target, job_id: str, resource: dict[str, Any] | None = None) -> str:
        return f"projects/{target.project}/jobs/{job_id}"

    def is_name(self, name: str) -> bool:
        return re.fullmatch(r"projects/[^/]+/jobs/[^/]+", name) is not None

    def state(self, resource: dict[str, Any]) -> str:
        return str(resource.get("state") or STATE_UNSPECIFIED)

    def outputs(self, resource: dict[str, Any], target: Target) -> dict[str, Any]:
        job_id = resource.get("jobId", "")
        return {
            **common_times(resource),
            "errorMessage": resource.get("errorMessage"),
            "trainingOutput": resource.get("trainingOutput"),
            "consoleUrl": CONSOLE_URL.format(job=job_id, project=target.project),
        }

    def is_ours(self, resource: dict[str, Any], body: dict[str, Any], job_id: str) -> bool:
        """Same id, our label, and the trainingInput we sent (every field we set, as we set it)."""
        if not super().is_ours(resource, body, job_id):
            return False
        theirs = resource.get("trainingInput") or {}
        return all(_same(v, theirs.get(k)) for k, v in body.get("trainingInput", {}).items())


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return all(_same(v, theirs.get(k)) for k, v in ours.items())
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(_same(a, b) for a, b in zip(ours, theirs, strict=True))
    return str(ours) == str(theirs)


def project_config(project: str, endpoint: str | None = None) -> dict[str, Any]:
    """projects.getConfig: the project's AI Platform service account and its Cloud TPU service account
    (`config.tpuServiceAccount`), on the same cached client and retries as the jobs."""
    from gcp_training_jobs.backends import transport

    root = endpoint or ENDPOINT
    answer: dict[str, Any] = transport.call(
        lambda: transport.service("ml", "v1", root).projects().getConfig(name=f"projects/{project}"),
        root,
        "projects.getConfig",
    )
    return answer
