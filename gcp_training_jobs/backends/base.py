"""What a backend is: the requests and body of one Google API, behind one interface.

The lifecycle (retries, adoption after a lost answer, waiting, cancelling) lives once in lifecycle.py
and drives any backend through this interface, so no logic is copied between APIs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from gcp_training_jobs.jobspec.core.names import JOB_LABEL, label_value


@dataclass(frozen=True)
class Target:
    """Where a job lives: project, region and (for tests and the emulator) an endpoint override."""

    project: str
    region: str
    endpoint: str | None = None


class Backend(ABC):
    """One Google training API."""

    name: ClassVar[str]
    api: ClassVar[str]
    version: ClassVar[str] = "v1"
    #: Whether a 409 on create means "this id already exists" (ml v1: ids are the caller's).
    conflict_means_exists: ClassVar[bool] = False
    #: Whether labels can change in place (ml v1 jobs.patch); otherwise a label change replaces the job.
    supports_label_update: ClassVar[bool] = True
    #: Whether a finished job's record is removed on delete (Vertex AI); ml v1 has no delete and keeps it.
    deletes_finished_jobs: ClassVar[bool] = False

    @abstractmethod
    def endpoint(self, target: Target) -> str:
        """The API root for a target (the override wins)."""

    @abstractmethod
    def create_request(self, svc: Any, target: Target, body: dict[str, Any]) -> Any: ...

    @abstractmethod
    def get_request(self, svc: Any, name: str) -> Any: ...

    @abstractmethod
    def cancel_request(self, svc: Any, name: str) -> Any: ...

    def delete_request(self, svc: Any, name: str) -> Any:
        """A request that removes a finished job's record (only where `deletes_finished_jobs`)."""
        raise NotImplementedError(f"{self.name} keeps finished jobs")

    @abstractmethod
    def patch_labels_request(self, svc: Any, name: str, labels: dict[str, str], current: dict[str, Any]) -> Any:
        ...

    @abstractmethod
    def find_request(self, svc: Any, target: Target, job_id: str) -> Any:
        """A get or list request that finds the job made for `job_id`, if it exists."""

    @abstractmethod
    def found(self, answer: dict[str, Any], job_id: str) -> dict[str, Any] | None:
        """The job in a find_request answer, or None."""

    def list_request(self, svc: Any, target: Target, labels: dict[str, str], page_token: str | None) -> Any:
        """A list request for the jobs at the target carrying every one of `labels` (the API filters)."""
        raise NotImplementedError(f"{self.name} cannot list jobs by label")

    def listed(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        """The jobs of one list answer (its next page's token is the pager's, transport.pages)."""
        raise NotImplementedError(f"{self.name} cannot list jobs by label")

    def job_id_of(self, resource: dict[str, Any]) -> str:
        """The job id a job was created under (the one its JOB_LABEL carries)."""
        return str((resource.get("labels") or {}).get(JOB_LABEL) or resource.get("jobId") or "")

    @abstractmethod
    def name_of(self, target: Target, job_id: str, resource: dict[str, Any] | None = None) -> str:
        """The job's full resource name."""

    @abstractmethod
    def is_name(self, name: str) -> bool:
        """Whether `name` is a full resource name of this API's jobs (what get, cancel and delete are given)."""

    @abstractmethod
    def state(self, resource: dict[str, Any]) -> str:
        """The job's state in the common vocabulary (QUEUED ... CANCELLED)."""

    @abstractmethod
    def outputs(self, resource: dict[str, Any], target: Target) -> dict[str, Any]:
        """createTime, startTime, endTime, errorMessage, trainingOutput and consoleUrl."""

    def is_ours(self, resource: dict[str, Any], body: dict[str, Any], job_id: str) -> bool:
        """Whether an existing job is the one this body describes (adoption after a lost answer)."""
        return (resource.get("labels") or {}).get(JOB_LABEL) == label_value(job_id)


def label_filter(labels: dict[str, str]) -> str:
    """The list filter both APIs understand: `labels.KEY="VALUE"` terms joined by AND."""
    return " AND ".join(f'labels.{key}="{value}"' for key, value in sorted(labels.items()))


def common_times(resource: dict[str, Any]) -> dict[str, Any]:
    return {k: resource.get(k) for k in ("createTime", "startTime", "endTime")}
