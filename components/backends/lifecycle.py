"""A training job's lifecycle on any backend: create (with adoption), read, wait, relabel, cancel.

This is the one code path for retries and reconciliation. A create is never blindly repeated: after an
answer that may hide a success (5xx, a dropped connection) the job is looked up by its id or label first,
and adopted if it is ours, so a lost answer never makes a second job.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from components.backends import transport
from components.backends.base import ACTIVE_STATES, FINISHED_STATES, Backend, Target
from components.backends.transport import ApiError, RetryPolicy, TransportError

Log = Callable[[str], None]


class JobConflict(Exception):
    """The job id is taken by a job that is not the one we asked for."""


def _nolog(_: str) -> None:
    pass


class Jobs:
    """Operations on one backend at one target; stateless apart from what it is given."""

    def __init__(self, backend: Backend, target: Target, *, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep, log: Log = _nolog):
        self.backend, self.target = backend, target
        self.policy = policy or RetryPolicy.from_env()
        self.sleep, self.log = sleep, log
        self.endpoint = backend.endpoint(target)

    @property
    def svc(self) -> Any:
        return transport.service(self.backend.api, self.backend.version, self.endpoint)

    def _call(self, method: str, make: Callable[[Any], Any]) -> Any:
        return transport.call(lambda: make(self.svc), self.endpoint, method, policy=self.policy,
                              sleep=self.sleep)

    def find(self, job_id: str) -> dict[str, Any] | None:
        """The job made for job_id, if it exists."""
        try:
            answer = self._call("find", lambda s: self.backend.find_request(s, self.target, job_id))
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        found: dict[str, Any] | None = self.backend.found(answer, job_id)
        return found

    def _adopt(self, job_id: str, body: dict[str, Any], why: str) -> dict[str, Any] | None:
        existing = self.find(job_id)
        if existing is None:
            return None
        if not self.backend.is_ours(existing, body, job_id):
            raise JobConflict(
                f"job {job_id} already exists in project {self.target.project} with a different spec; "
                "job ids can never be reused: change the resource name or let a new suffix be generated"
            )
        self.log(f"adopted job {job_id} ({why}): it was created by an earlier attempt whose answer was lost")
        return existing

    def create(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create the job once: 429 is retried; an ambiguous failure is reconciled before any retry."""
        method = f"{self.backend.api}.create"
        ambiguous = False
        last: Exception | None = None
        for attempt in range(self.policy.attempts):
            if ambiguous:
                adopted = self._adopt(job_id, body, "reconciled after a failed attempt")
                if adopted is not None:
                    return adopted
            try:
                request = self.backend.create_request(self.svc, self.target, body)
                created: dict[str, Any] = transport.execute_once(request, self.endpoint, method)
                return created
            except ApiError as error:
                last = error
                if error.status == 409 and self.backend.conflict_means_exists:
                    adopted = self._adopt(job_id, body, "the id already existed")
                    if adopted is not None:
                        return adopted
                    raise
                if error.status not in transport.RETRYABLE_STATUS:
                    raise
                ambiguous = ambiguous or error.status != 429
            except TransportError as error:
                last, ambiguous = error, True
            self.log(f"create of {job_id} failed ({last}); retrying")
            self.sleep(self.policy.delay(attempt))
        if ambiguous:
            adopted = self._adopt(job_id, body, "reconciled after the last attempt")
            if adopted is not None:
                return adopted
        assert last is not None
        raise last

    def get(self, name: str) -> dict[str, Any] | None:
        """The job, or None when it no longer exists."""
        try:
            job: dict[str, Any] = self._call("get", lambda s: self.backend.get_request(s, name))
            return job
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def wait(self, name: str, timeout: float, *, first_poll: float = 1.0,
             cap: float = 30.0, clock: Callable[[], float] = time.monotonic) -> dict[str, Any] | None:
        """Poll with capped backoff until the job finishes or `timeout` passes; log each state change."""
        deadline, delay, seen = clock() + timeout, first_poll, ""
        while True:
            job = self.get(name)
            if job is None:
                return None
            state = self.backend.state(job)
            if state != seen:
                self.log(f"{name}: {state}")
                seen = state
            if state in FINISHED_STATES or clock() >= deadline:
                return job
            self.sleep(min(delay, max(0.0, deadline - clock())))
            delay = min(cap, delay * 2)

    def relabel(self, name: str, labels: dict[str, str]) -> dict[str, Any]:
        current = self.get(name) or {}
        job: dict[str, Any] = self._call(
            "patch", lambda s: self.backend.patch_labels_request(s, name, labels, current)
        )
        return job

    def stop(self, name: str) -> str:
        """Cancel a running job; remove a finished one's record where the API allows; ignore one gone.

        Returns what was done: "gone", "cancelled", "deleted" or "kept".
        """
        job = self.get(name)
        if job is None:
            return "gone"
        state = self.backend.state(job)
        if state in ACTIVE_STATES:
            try:
                self._call("cancel", lambda s: self.backend.cancel_request(s, name))
            except ApiError as error:
                if error.status not in (400, 404):  # finished or vanished meanwhile
                    raise
            self.log(f"cancelled {name} (was {state})")
            return "cancelled"
        if state in FINISHED_STATES and self.backend.deletes_finished_jobs:
            try:
                self._call("delete", lambda s: self.backend.delete_request(s, name))
            except ApiError as error:
                if error.status != 404:
                    raise
            return "deleted"
        return "kept"
