"""A training job's lifecycle on any backend: create (with adoption), read, wait, relabel, cancel.

This is the one code path for retries and reconciliation. At most one live job per resource:
- before any create, the live jobs carrying the resource's identity labels (`pulumi-resource`,
  `pulumi-spec`) are looked up, and one found is adopted instead of creating (a job left by a run that
  died), when it is the job declared (`Declared`: its body agrees with what the stack renders for it; a job
  with the labels and another body is refused, NotDeclared, never adopted and never cancelled); a lookup that
  fails fails the create, nothing is sent;
- every retry of a create looks again first, on every backend, whatever the failure (a rate-limit 429, a 5xx, a
  timeout, a lost answer, a request never sent): the live jobs carrying the identity labels (another run may have
  made one meanwhile), and where ids are the caller's (ml v1) the job made under its id. A create whose outcome is
  unknown (no answer, a timeout, a 5xx) is never blindly sent again: where ids are the caller's it is re-sent only
  when absent (a re-send of the same id cannot make a second job: the API answers 409); where the server assigns
  ids (Vertex AI) the job is looked for by its labels, with backoff, for at most reconcile_seconds(), and adopted
  when it appears; past that the create fails loudly and is never re-sent: the next run's lookup finds the job if
  it was made after all. The transport never re-sends a create on its own (transport.call refuses one).
- `guard` runs right before each create, cancel, delete and relabel is sent, each retry too: in the engine's
  provider process it ends the process once its engine is gone (resources/engine_watch.py).
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


class NotDeclared(TrainingJobsError):
    """A live job carries the resource's identity labels but is not the job the stack declares (another body): it is
    neither adopted nor cancelled, and nothing is created beside it."""


#: Why a live job carrying the resource's identity labels is not the job the stack declares for it (the fields that
#: differ, values masked), or None when it is: the one judge of every adoption by labels.
Declared = Callable[[dict[str, Any]], "str | None"]


def _any_job(_: dict[str, Any]) -> str | None:
    return None


def _unguarded() -> None:
    pass


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
                 clock: Callable[[], float] = time.monotonic, patience: float | None = None,
                 guard: Callable[[], None] = _unguarded):
        self.backend, self.target = backend, target
        self.policy = policy or RetryPolicy.from_env()
        self.sleep, self.log, self.clock, self.guard = sleep, log, clock, guard
        self.patience = reconcile_seconds() if patience is None else patience
        self.endpoint = backend.endpoint(target)

    @property
    def svc(self) -> Any:
        return transport.service(self.backend.api, self.backend.version, self.endpoint)

    def _call(self, method: str, make: Callable[[Any], Any], *, writes: bool = False) -> Any:
        """A call retried by the transport (idempotent); `writes` (cancel, delete, relabel): guarded before each
        attempt is sent."""
        def request() -> Any:
            if writes:
                self.guard()
            return make(self.svc)
        return transport.call(request, self.endpoint, method, policy=self.policy, sleep=self.sleep)

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

    def _adopt_live(self, live: list[dict[str, Any]], why: str, declared: Declared = _any_job) -> dict[str, Any]:
        """The oldest of `live` adopted, the others reported; NotDeclared when one of them is not the job declared
        (named with why), so that nothing is adopted or created beside a job the stack does not own."""
        for other in live:
            if (reason := declared(other)) is not None:
                raise NotDeclared(
                    f"found job {self.backend.job_id_of(other) or '?'} ({other.get('name') or 'no name'}, "
                    f"{self.backend.state(other)}) in project {self.target.project}, region {self.target.region}: it "
                    f"carries this resource's identity labels, but it is not the job the stack declares ({reason}). "
                    "It was not adopted, nothing was created beside it, and it was not cancelled (it is not the "
                    "stack's to cancel): if it is not wanted, cancel it, then run `pulumi up` again")
        job = live[0]
        self.log(f"adopted live job {self.backend.job_id_of(job)} ({why}) instead of creating another")
        if len(live) > 1:
            others = ", ".join(self.backend.job_id_of(j) for j in live[1:])
            self.log(f"warning: {len(live) - 1} more live job(s) carry the same labels and are not in state: "
                     f"{others}; cancel them if they are not wanted")
        return job

    def adopt_live(self, identity: dict[str, str], *, before: str = "a job",
                   found: list[dict[str, Any]] | None = None, declared: Declared = _any_job) -> dict[str, Any] | None:
        """The live job carrying `identity` at this target, adopted (the oldest; the others reported), or None. A
        lookup that fails raises LookupFailed: nothing may be created without it (`before`: what was to be).
        `found`: the jobs carrying `identity` in any state, when the caller has just listed them (find_all).
        `declared`: why a live job found is not the job declared (NotDeclared), None when it is."""
        if found is None:
            try:
                found = self.find_all(identity)
            except (ApiError, TransportError) as error:
                raise LookupFailed(f"cannot look for a live job of this resource before creating {before} "
                                   f"({error}); nothing was created: run `pulumi up` again") from None
        live = [job for job in found if self.backend.state(job) in LIVE_STATES]
        return self._adopt_live(live, "left by an earlier run", declared) if live else None

    def create(self, job_id: str, body: dict[str, Any], identity: dict[str, str], *,
               looked_up: bool = False, declared: Declared = _any_job) -> dict[str, Any]:
        """The resource's one live job: a live job carrying `identity` is adopted (when `declared` finds it the job
        declared; NotDeclared else); else the job is created once. A failed attempt (a rate-limit 429, a 5xx, no
        answer, a request never sent) is sent again only after a look, every backend alike (`_look_again`): a job
        found is adopted, an outcome unknown is reconciled, never re-sent blindly; a quota refusal,
        transport.QuotaExceeded, is raised at once. `looked_up`: the caller's adopt_live has just found no live
        job."""
        adopted = None if looked_up else self.adopt_live(identity, before=job_id, declared=declared)
        if adopted is not None:
            return adopted
        method = f"{self.backend.api}.create"
        last: Exception | None = None
        unknown = False
        for attempt in range(self.policy.attempts):
            if attempt:
                assert last is not None
                self.log(f"create of {job_id} failed ({last}); looking for it before sending it again")
                if not unknown:  # (an outcome unknown is reconciled at once: its lookups wait with backoff)
                    self.sleep(self.policy.delay(attempt - 1))
                found = self._look_again(job_id, body, identity, last, unknown=unknown, declared=declared)
                if found is not None:
                    return found
            try:
                self.guard()  # the engine that asked for it is there to record it
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
        assert last is not None
        raise last

    def _look_again(self, job_id: str, body: dict[str, Any], identity: dict[str, str], cause: Exception, *,
                    unknown: bool, declared: Declared) -> dict[str, Any] | None:
        """Before a create is sent again, right before it: the job to adopt, or None when sending again is safe. An
        outcome unknown is reconciled (`_reconcile`); after a failure that made nothing here (a rate-limit 429, a
        request never sent) and its backoff, another run may have made the job meanwhile: the live jobs carrying
        `identity` are read once, and a lookup that fails sends nothing (LookupFailed)."""
        if unknown:
            return self._reconcile(job_id, body, identity, cause, declared)
        try:
            live = self.find_live(identity)
        except (ApiError, TransportError) as error:
            raise LookupFailed(f"create of job {job_id} failed ({cause}), and the look for a live job of this "
                               f"resource before sending it again failed too ({error}); nothing was sent again: "
                               "run `pulumi up` again") from None
        return self._adopt_live(live, "made meanwhile, found before a retry", declared) if live else None

    def _reconcile(self, job_id: str, body: dict[str, Any], identity: dict[str, str],
                   cause: Exception, declared: Declared = _any_job) -> dict[str, Any] | None:
        """After a create whose outcome is unknown: the job, once found (by its id where ids are the caller's, and
        by its identity labels on every backend: another run's job of this resource counts). None only where a
        re-send is safe (the id is the caller's and no job holds it, nor any live job the labels). Looks with
        backoff for at most `patience` seconds, then raises CreateOutcomeUnknown."""
        deadline, delay = self.clock() + self.patience, self.policy.base_seconds
        trouble = ""
        while True:
            try:
                if self.backend.conflict_means_exists and \
                        (mine := self._adopt(job_id, body, "reconciled after a failed attempt")) is not None:
                    return mine
                live = self.find_live(identity)
                if live:
                    return self._adopt_live(live, "reconciled by its labels after a failed attempt", declared)
                if self.backend.conflict_means_exists:
                    return None
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
            "patch", lambda s: self.backend.patch_labels_request(s, name, labels, current), writes=True
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
                self._call("cancel", lambda s: self.backend.cancel_request(s, name), writes=True)
            except ApiError as error:
                if error.status not in (400, 404):  # finished or vanished meanwhile
                    raise
            self.log(f"cancelled {name} (was {state})")
            return "cancelled"
        if delete_record and state in FINISHED_STATES and self.backend.deletes_finished_jobs:
            try:
                self._call("delete", lambda s: self.backend.delete_request(s, name), writes=True)
            except ApiError as error:
                if error.status != 404:
                    raise
            self.log(f"deleted the record of {name} (was {state}; deleteRecordOnDelete)")
            return "deleted"
        return "kept"
