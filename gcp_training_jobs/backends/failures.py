"""Whose fault a FAILED job is: the user's code, or Google's (capacity, preemption, internal faults), read from the
job's `error` (google.rpc.Status: code and message) and whether it ever ran (startTime).

- The user's code: a replica "exited with a non-zero status" ("The replica workerpool1-1 exited with a non-zero
  status of 1. Termination reason: Error.", code 3: GoogleCloudPlatform/vertex-ai-samples#1504; ml v1 jobs say it
  the same way). Never made again on its own.
- Capacity: "Resources are insufficient in region: us-central1" (openreview/openreview-expertise#401: Vertex tried
  every zone of the region), or code RESOURCE_EXHAUSTED (8) ("code: 8 message: The following quota metrics exceed
  quota limits", GoogleCloudPlatform/vertex-ai-samples#700). Before the job ran (no startTime), the next placement
  (jobs.NAME.fallbacks) is tried.
- Preemption (a Spot VM reclaimed) and Google's internal faults: codes INTERNAL (13), UNAVAILABLE (14), ABORTED
  (10), or a message that says the replica was preempted.
Anything else (a bad argument, a permission) is "other": reported, never made again on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

USER = "user"
CAPACITY = "capacity"
PREEMPTION = "preemption"
INTERNAL = "internal"
OTHER = "other"
#: The causes that are Google's: a job failed for one of them is made again (jobs.NAME.retries).
GOOGLES = frozenset({CAPACITY, PREEMPTION, INTERNAL})

#: google.rpc.Code numbers (google/rpc/code.proto).
RESOURCE_EXHAUSTED, ABORTED, INTERNAL_CODE, UNAVAILABLE = 8, 10, 13, 14

_REPLICA_EXIT = re.compile(r"(?:The )?replica (?P<replica>\S+) exited with a non-zero status(?: of (?P<status>-?\d+))?",
                           re.IGNORECASE)
_ANY_EXIT = re.compile(r"exited with a non-zero status", re.IGNORECASE)
_STOCKOUT = re.compile(r"Resources are insufficient in region", re.IGNORECASE)
_PREEMPTED = re.compile(r"preempt", re.IGNORECASE)


@dataclass(frozen=True)
class Failure:
    """Why a job failed: `cause` (USER, CAPACITY, PREEMPTION, INTERNAL, OTHER), whether it ran, its error, and the
    replica named by a non-zero exit."""

    cause: str
    ran: bool
    code: int | None
    message: str
    replica: str | None = None

    @property
    def googles(self) -> bool:
        return self.cause in GOOGLES

    @property
    def before_it_ran(self) -> bool:
        """A capacity failure before the job ran: the next placement may have what this one lacked."""
        return self.cause == CAPACITY and not self.ran

    def describe(self) -> str:
        what = {USER: "the user's code failed", CAPACITY: "Google had no capacity",
                PREEMPTION: "its VM was preempted", INTERNAL: "of a fault on Google's side",
                OTHER: "of an error that is neither the user's code nor Google's capacity"}[self.cause]
        replica = f", replica {self.replica}" if self.replica else ""
        code = f"code {self.code}: " if self.code is not None else ""
        return f"{what}{replica} ({code}{self.message or 'no message'})"


def failure_of(code: Any, message: Any, *, ran: bool) -> Failure:
    """The cause of a failure with google.rpc.Status `code` and `message`, for a job that `ran` (had a startTime)."""
    text = str(message or "")
    try:
        number: int | None = int(code) if code is not None else None
    except (TypeError, ValueError):
        number = None
    exit_ = _REPLICA_EXIT.search(text)
    if exit_ is not None or _ANY_EXIT.search(text):
        return Failure(USER, ran, number, text, exit_.group("replica") if exit_ else None)
    if _STOCKOUT.search(text) or number == RESOURCE_EXHAUSTED:
        return Failure(CAPACITY, ran, number, text)
    if _PREEMPTED.search(text):
        return Failure(PREEMPTION, ran, number, text)
    if number in (INTERNAL_CODE, UNAVAILABLE, ABORTED):
        return Failure(INTERNAL, ran, number, text)
    return Failure(OTHER, ran, number, text)


def failure_of_job(resource: dict[str, Any]) -> Failure:
    """The cause of a FAILED job as an API answers it: Vertex AI's `error` {code, message}; ml v1's errorMessage
    (no code)."""
    given = resource.get("error")
    error: dict[str, Any] = given if isinstance(given, dict) else {}
    message = error.get("message") or resource.get("errorMessage")
    return failure_of(error.get("code"), message, ran=bool(resource.get("startTime")))
