"""The job record both APIs store, the Vocabulary that says how each API names what they share
(states, resource names, list shape, filter fields, JSON), and the project-id and time formats."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


def project_number(project: str) -> str:
    """A stable fake 12-digit project number for a project id (real APIs know the true one)."""
    digest = int(hashlib.sha256(project.encode("utf-8")).hexdigest(), 16)
    return str(100_000_000_000 + digest % 900_000_000_000)


def same_project(given: str, stored: str) -> bool:
    """A path may name the project by id or by (fake) number, as with the real APIs."""
    return given == stored or given == project_number(stored)


def rfc3339(seconds: float) -> str:
    """Epoch seconds as RFC 3339 UTC with microseconds and a Z, as Google's JSON mapping writes it."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """How one API says what both share."""

    api: str  # "ml" or "aiplatform"
    parent: str  # the collection's parent, str.format with project and location
    collection: str  # "jobs" / "customJobs": resource names, method names, the list answer's field
    prefix: str  # of every state name ("" or "JOB_STATE_")
    phases: tuple[str, ...]  # unprefixed, in order; the last one is the running phase
    messages: tuple[str, str]  # errorMessage of a job labelled to fail, and of a cancelled job
    not_found: str  # the 404 message, str.format with name
    page_sizes: tuple[int, int]  # default and largest page size of a list
    filter_fields: dict[str, Callable[[Job], str | None]]  # list filter fields beyond labels.KEY and state
    render: Callable[[Job], dict[str, Any]]  # the job's JSON as the API answers it
    kind: str = "Job"  # the resource's name in messages ("CustomJob", "HyperparameterTuningJob")
    listed: Callable[[Job], dict[str, Any]] | None = None  # the job's JSON in a list answer (None: render)
    schema: str = ""  # the job's discovery schema, when answers may carry enums as numbers ("": never)
    list_schema: str = ""  # the list answer's discovery schema, likewise

    def name(self, project: str, location: str, job_id: str) -> str:
        return f"{self.parent.format(project=project, location=location)}/{self.collection}/{job_id}"

    def state(self, name: str) -> str:
        """The API's name of a state: "FAILED" -> "FAILED" or "JOB_STATE_FAILED"."""
        return self.prefix + name

    @property
    def running_phases(self) -> tuple[str, ...]:
        return tuple(self.state(p) for p in self.phases)

    @property
    def finished(self) -> frozenset[str]:
        return frozenset(self.state(s) for s in ("SUCCEEDED", "FAILED", "CANCELLED"))


@dataclass
class Job:
    """One job of either API; `body` holds the user's fields exactly as received (minus output-only)."""

    vocab: Vocabulary
    project: str
    location: str  # "" for ml
    job_id: str  # ml jobId, or the Vertex numeric id
    body: dict[str, Any]
    seq: int
    created: float
    state: str
    entered: float
    start: float | None = None
    end: float | None = None
    updated: float = 0.0
    error_message: str | None = None
    error_code: int = 13
    revision: int = 0
    seen: float = 0.0  # the emulated time the job was last settled at (what its JSON shows)
    phase_seconds: float = 0.0  # the phase length in force then

    @property
    def api(self) -> str:
        return self.vocab.api

    @property
    def name(self) -> str:
        return self.vocab.name(self.project, self.location, self.job_id)

    @property
    def labels(self) -> dict[str, str]:
        labels = self.body.get("labels")
        return labels if isinstance(labels, dict) else {}

    def status(self, *, update_time: bool) -> dict[str, Any]:
        """The output-only state and times of the job's JSON, in the order both APIs write them."""
        out: dict[str, Any] = {"state": self.state, "createTime": rfc3339(self.created)}
        if update_time:
            out["updateTime"] = rfc3339(self.updated)
        if self.start is not None:
            out["startTime"] = rfc3339(self.start)
        if self.end is not None:
            out["endTime"] = rfc3339(self.end)
        return out
