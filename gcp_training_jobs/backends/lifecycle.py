"""A training job's lifecycle on any backend: create (with adoption), read, wait, relabel, cancel.

This is the one code path for retries and reconciliation. At most one live job per resource:
- before any create, the live jobs carrying the resource's identity labels (`pulumi-resource`,
  `pulumi-spec`) are looked up, and one found is adopted instead of creating (a job left by a run that
  died); a lookup that fails fails the create, nothing is sent;
- a create whose outcome is unknown (no answer, a timeout, a 5xx) is never blindly sent again. Where ids
  are the caller's (ml v1) the job is looked up by its id and the create re-sent only when it is absent
  (a re-send of the same id cannot make a second job: the API answers 409). Where the server assigns ids
  (Vertex AI) the job is looked for by its labels, with backoff, for at most reconcile_seconds(), and
  adopted when it appears; past that the create fails loudly and is never re-sent: the next run's
  lookup finds the job if it was made after all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Backend, Target
from gcp_training_jobs.backends.transport import ApiError, RetryPolicy, TransportError
from gcp_training_jobs.jobspec.core.env import VARIABLES, env_settings
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import FINISHED_STATES, LIVE_STATES, PAUSED_STATES

Log = Callable[[str], None]

#: How long a create whose outcome is unknown is reconciled (looked for) before failing loudly.
RECONCILE_ENV = VARIABLES["reconcile_seconds"]


class JobConflict(TrainingJobsError):
    """The job id is taken by a job that is not the one we asked for."""


class LookupFailed(TrainingJobsError):
    """The lookup before a create failed: nothing was created."""


class NotAJobName(TrainingJobsError, ValueError):
    """A job name that is not one of the API's job names (a resource id of another API, or none): nothing is read."""


class CreateOutcomeUnknown(TrainingJobsError):
    """A create that may or may not have made the job, not found in time; it was not sent again."""


def reconcile_seconds() -> float:
    """$GCP_TRAINING_JOBS_RECONCILE_SECONDS, else env.RECONCILE_SECONDS (180)."""
    return env_settings().reconcile_seconds


def _nolog(_: str) -> None:
    pass


class Jobs:
    """Operations on one backend at one target; stateless apart from what it is given.

    `clock` and `sleep` measure and spend every wait (retries, the reconcile window, `wait`): time.monotonic
    and time.sleep, or a test's fake clock, which then drives them without real time passing.
    """

    def __init__(self, backend: Backend, target: Target, *, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep, log: Log = _nolog,
                 clock: Callable[[], float] = time.monotonic, patience: float | None = None):
        self.backend, self.target = backend, target
        self.policy = policy or RetryPolicy.from_env()
        self.sleep, self.log, self.clock = sleep, log, clock
        self.patience = reconcile_seconds() if patience is None else patience
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

    def find_live(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        """The live (queued, preparing, running; paused) jobs carrying every one of `labels`, oldest first."""
        return [job for job in self.find_all(labels) if self.backend.state(job) in LIVE_STATES]

    def find_all(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        """The jobs in any state carrying every one of `labels` (the API's label filter, every page through the one
        pager, transport.pages: a page token that repeats or is not text, or too many pages, is its PagingError;
        the labels checked again here), oldest first."""
        def request(token: str | None) -> Any:
            return self.backend.list_request(self.svc, self.target, labels, token)

        send = partial(transport.call, policy=self.policy, sleep=self.sleep)
        jobs = [job for answer in transport.pages(request, self.endpoint, "list", send=send)
                for job in self.backend.listed(answer)
                if all((job.get("labels") or {}).get(k) == v for k, v in labels.items())]
        return sorted(jobs, key=lambda job: str(job.get("createTime") or ""))

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

    def _adopt_live(self, live: list[dict[str, Any]], why: str) -> dict[str, Any]:
        job = live[0]
        self.log(f"adopted live job {self.backend.job_id_of(job)} ({why}) instead of creating another")
        if len(live) > 1:
            others = ", ".join(self.backend.job_id_of(j) for j in live[1:])
            self.log(f"warning: {len(live) - 1} more live job(s) carry the same labels and are not in state: "
                     f"{others}; cancel them if they are not wanted")
        return job

    def adopt_live(self, identity: dict[str, str], *, before: str = "a job",
                   found: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """The live job carrying `identity` at this target, adopted (the oldest; the others reported), or None. A
        lookup that fails raises LookupFailed: nothing may be created without it (`before`: what was to be).
        `found`: the jobs carrying `identity` in any state, when the caller has just listed them (find_all)."""
        if found is None:
            try:
                found = self.find_all(identity)
            except (ApiError, TransportError) as error:
                raise LookupFailed(f"cannot look for a live job of this resource before creating {before} "
                                   f"({error}); nothing was created: run `pulumi up` again") from None
        live = [job for job in found if self.backend.state(job) in LIVE_STATES]
        return self._adopt_live(live, "left by an earlier run") if live else None

    def create(self, job_id: str, body: dict[str, Any], identity: dict[str, str], *,
               looked_up: bool = False) -> dict[str, Any]:
        """The resource's one live job: a live job carrying `identity` is adopted; else the job is created
        once (a rate-limit 429 and requests never sent are retried; a quota refusal, transport.QuotaExceeded, is
        raised at once; an unknown outcome is reconciled, never re-sent blindly)."""
        adopted = None if looked_up else self.adopt_live(identity, before=job_id)
        if adopted is not None:  # (looked_up: the caller's adopt_live has just found no live job)
            return adopted
        method = f"{self.backend.api}.create"
        last: Exception | None = None
        for attempt in range(self.policy.attempts):
            if attempt:
                self.log(f"create of {job_id} failed ({last}); retrying")
                self.sleep(self.policy.delay(attempt - 1))
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
                if not transport.retryable(error):  # a quota refusal too (QuotaExceeded): nothing made, at once
                    raise
                unknown = error.status != 429  # a 5xx: the job may have been made
            except TransportError as error:
                last, unknown = error, error.sent
            if unknown and (found := self._reconcile(job_id, body, identity, last)) is not None:
                return found  # (None: absent under an id of ours, so a re-send is safe)
        assert last is not None
        raise last

    def _reconcile(self, job_id: str, body: dict[str, Any], identity: dict[str, str],
                   cause: Exception) -> dict[str, Any] | None:
        """After a create whose outcome is unknown: the job, once found. None only where a re-send is
        safe (the id is the caller's and no job holds it). Looks with backoff for at most `patience`
        seconds, then raises CreateOutcomeUnknown."""
        deadline, delay = self.clock() + self.patience, self.policy.base_seconds
        trouble = ""
        while True:
            try:
                if self.backend.conflict_means_exists:
                    return self._adopt(job_id, body, "reconciled after a failed attempt")
                live = self.find_live(identity)
                if live:
                    return self._adopt_live(live, "reconciled by its labels after a failed attempt")
                trouble = "not found yet"
            except (ApiError, TransportError) as error:
                trouble = f"the lookup failed: {error}"
            remaining = deadline - self.clock()
            if remaining <= 0:
                labels = ", ".join(f"{k}={v}" for k, v in sorted(identity.items()))
                raise CreateOutcomeUnknown(
                    f"create of job {job_id} failed ({cause}) and its outcome is unknown: looked for it by its "
                    f"labels ({labels}) for {self.patience:g}s ({trouble}). It was not sent again; the next "
                    f"`pulumi up` will look for it again and adopt it if it exists ({RECONCILE_ENV} sets how "
                    "long to look)")
            self.sleep(min(delay, remaining))
            delay = min(self.policy.cap_seconds, delay * 2)

    def get(self, name: str) -> dict[str, Any] | None:
        """The job, or None when it no longer exists; NotAJobName for a name that is not one of this API's."""
        if not self.backend.is_name(name):
            raise NotAJobName(f"{name!r} is not the name of a {self.backend.name} job")
        try:
            job: dict[str, Any] = self._call("get", lambda s: self.backend.get_request(s, name))
            return job
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def wait(self, name: str, timeout: float, *, first_poll: float = 1.0, cap: float = 30.0,
             on_poll: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any] | None:
        """Poll with capped backoff until the job finishes, is paused (it waits for someone to resume it) or `timeout`
        passes by `self.clock`, sleeping with `self.sleep`; log each state change; `on_poll` sees the job at each poll
        (e.g. to report its log)."""
        clock = self.clock
        deadline, delay, seen = clock() + timeout, first_poll, ""
        while True:
            job = self.get(name)
            if job is None:
                return None
            state = self.backend.state(job)
            if state != seen:
                self.log(f"{name}: {state}")
                seen = state
            if on_poll is not None:
                on_poll(job)
            if state in FINISHED_STATES or state in PAUSED_STATES or clock() >= deadline:
                return job
            self.sleep(min(delay, max(0.0, deadline - clock())))
            delay = min(cap, delay * 2)

    def relabel(self, name: str, labels: dict[str, str]) -> dict[str, Any]:
        current = self.get(name) or {}
        job: dict[str, Any] = self._call(
            "patch", lambda s: self.backend.patch_labels_request(s, name, labels, current)
        )
        return job

    def stop(self, name: str, *, delete_record: bool = False) -> str:
        """Cancel a job still active; leave a finished one's record on the API (its history: `status`, `spend`,
        its console page and logs), unless `delete_record` asks to remove it where the API allows (Vertex AI);
        ignore one gone.

        Returns what was done: "gone", "cancelled", "deleted" or "kept".
        """
        job = self.get(name)
        if job is None:
            return "gone"
        state = self.backend.state(job)
        if state in LIVE_STATES:
            try:
                self._call("cancel", lambda s: self.backend.cancel_request(s, name))
            except ApiError as error:
                if error.status not in (400, 404):  # finished or vanished meanwhile
                    raise
            self.log(f"cancelled {name} (was {state})")
            return "cancelled"
        if delete_record and state in FINISHED_STATES and self.backend.deletes_finished_jobs:
            try:
                self._call("delete", lambda s: self.backend.delete_request(s, name))
            except ApiError as error:
                if error.status != 404:
                    raise
            self.log(f"deleted the record of {name} (was {state}; deleteRecordOnDelete)")
            return "deleted"
        return "kept"
