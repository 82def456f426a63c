"""The TrainingJob dynamic provider: check, diff, create, read, update and delete of one training job.

Jobs are immutable: any change to the spec replaces the job (a new id, the old job cancelled); a label
change updates in place where the API can patch labels (ml v1) and replaces where it cannot (Vertex).
The provider object is pickled into Pulumi state: it holds only the endpoint override read in
`configure`, never a client, a credential or an Output (see ARCHITECTURE.md).

Every job carries identity labels: `pulumi-resource` (a hash of the Pulumi organization, project, stack
and resource name, given as the `identity` input) and `pulumi-spec` (a hash of what the job runs). A
create first adopts a live job carrying both (one left by a run that died), so a resource never has two
live jobs; the job id's random suffix is drawn at create and read back from the job adopted.

The `job` input is either vocabulary (components.resources.job_wire); `guardrails` and `protect` carry the
stack's rules, which check enforces per job and diff / delete enforce on active jobs (job_review).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult
from pulumi.runtime.rpc import UNKNOWN

from components import backends
from components.backends import get_backend
from components.backends.base import RESOURCE_LABEL, SPEC_LABEL, Target
from components.backends.lifecycle import Jobs
from components.backends.transport import ApiError, TransportError
from components.jobspec.core.errors import SpecError
from components.jobspec.core.names import BACKENDS
from components.jobspec.core.problems import Problem
from components.jobspec.load import Judged
from components.jobspec.render.bodies import AnyJob, job_labels
from components.jobspec.rules import today
from components.resources.job_review import (
    ProtectedJobError,
    Protection,
    Standing,
    cost_line,
    guardrails_of,
    job_rule_problems,
    verdict,
)
from components.resources.job_wire import (
    Job,
    VertexJob,
    canonical,
    judge_wire,
    known_only,
    new_job_id,
    parse_wire,
    preview_job_id,
    region_of,
    spec_of,
)
from components.resources.provider_base import EndpointProvider, environment_failures

#: Inputs whose change forces a new job (besides the spec, and labels where they cannot be patched).
REPLACING = ("project", "backend")
#: Inputs that change in place (recorded by update; no API call but a read).
IN_PLACE = ("name", "waitForCompletion", "waitTimeoutSeconds", "guardrails", "protect")
#: Outputs read back from the API.
OUTPUT_KEYS = ("jobId", "resourceName", "state", "backendState", "createTime", "startTime", "endTime",
               "errorMessage", "trainingOutput", "consoleUrl", "trialCount", "bestTrial")
#: Hex digits of the identity label values (80 bits).
IDENTITY_HEX = 20
DEFAULT_WAIT_TIMEOUT = 24 * 3600.0
def _unknown_paths(value: Any, path: str = "") -> Iterator[str]:
    if value == UNKNOWN:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unknown_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unknown_paths(item, f"{path}[{i}]")


def _is_unknown(value: Any) -> bool:
    return value == UNKNOWN


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:IDENTITY_HEX]


def identity_labels(identity: str, job: dict[str, Any], backend: str, parsed: AnyJob | None = None) -> dict[str, str]:
    """The labels a live job of this resource and spec is found by: `pulumi-resource` (whose job) and
    `pulumi-spec` (what it runs; with its labels on Vertex, where a label change makes a new job). `parsed`:
    the job already parsed, when the caller has it."""
    spec: dict[str, Any] = {"spec": spec_of(job, parsed)}
    if backend in BACKENDS and not get_backend(backend).supports_label_update:
        spec["labels"] = canonical(job.get("labels") or {})
    return {RESOURCE_LABEL: _digest(identity), SPEC_LABEL: _digest(json.dumps(spec, sort_keys=True))}


def _seconds_problem(value: Any) -> str | None:
    """Why a waitTimeoutSeconds value is not a number of seconds (None: it is, or it is not set)."""
    if value is None or value == UNKNOWN:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of seconds; allowed: a finite number of seconds > 0, e.g. 3600"
    if not math.isfinite(value) or value <= 0:
        return f"{value!r}; allowed: a finite number of seconds > 0, e.g. 3600"
    return None


@dataclass
class _Inputs:
    name: str
    project: str
    backend: str
    job: dict[str, Any]
    job_id: str
    identity: str
    wait: bool
    wait_timeout: float
    props: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, props: dict[str, Any]) -> _Inputs:
        timeout = props.get("waitTimeoutSeconds")
        return cls(
            name=str(props.get("name", "")),
            project=str(props.get("project", "")),
            backend=str(props.get("backend", "")),
            job=dict(job) if isinstance(job := props.get("job"), dict) else {},
            job_id=str(props.get("jobId") or ""),
            identity=str(props.get("identity") or ""),
            wait=props.get("waitForCompletion") is True,
            wait_timeout=float(timeout) if _seconds_problem(timeout) is None and timeout else DEFAULT_WAIT_TIMEOUT,
            props=props,
        )

    @property
    def region(self) -> str:
        return region_of(self.job)

    def parsed(self) -> AnyJob:
        return parse_wire(self.job)

    def labels(self, job_id: str, parsed: AnyJob | None = None) -> dict[str, str]:
        """The labels the job is created (or relabelled) with: the user's, its id's and its identity."""
        parsed = parsed if parsed is not None else self.parsed()
        return {**job_labels(parsed, job_id), **identity_labels(self.identity, self.job, self.backend, parsed)}


class TrainingJobProvider(EndpointProvider):
    """CRUD for training jobs on the backend named in the inputs (ai-platform or vertex)."""

    # -- helpers ---------------------------------------------------------------------------------

    #: The clock and sleep of the lifecycle's retries, reconcile window and waits. Class attributes, never
    #: state: the provider is pickled into Pulumi state and must stay tiny (a test puts fakes on an instance).
    clock: Callable[[], float] = staticmethod(time.monotonic)
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def _jobs(self, inputs: _Inputs, job: AnyJob | None = None) -> Jobs:
        target = Target(inputs.project, inputs.region, self._endpoint())
        chosen = backends.backend_for(inputs.backend, job if job is not None else inputs.job)
        return Jobs(chosen, target, log=lambda msg: pulumi.log.info(msg), clock=self.clock, sleep=self.sleep)

    def _outputs(self, jobs: Jobs, resource: dict[str, Any], job_id: str = "") -> dict[str, Any]:
        backend = jobs.backend
        job_id = backend.job_id_of(resource) or job_id
        return {
            "jobId": job_id,
            "resourceName": backend.name_of(jobs.target, job_id, resource),
            "state": backend.state(resource),
            "backendState": resource.get("state"),
            **backend.outputs(resource, jobs.target),
        }

    # -- check and diff --------------------------------------------------------------------------

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        if env_failures := environment_failures():  # the variables the job is judged and sent with
            return CheckResult(dict(news), env_failures)
        failures: list[CheckFailure] = []
        inputs = dict(news)
        new = _Inputs.of(news)
        if new.backend not in BACKENDS and new.backend != UNKNOWN:
            failures.append(CheckFailure("backend", f"{new.backend!r}; allowed: {', '.join(BACKENDS)}"))
        if not new.project:
            failures.append(CheckFailure("project", "required: the Google Cloud project id"))
        if not new.identity:
            failures.append(CheckFailure("identity", "required: the resource's identity (organization/project/"
                                         "stack/name), which labels its job so that a re-run finds it"))
        if (problem := _seconds_problem(news.get("waitTimeoutSeconds"))) is not None:
            failures.append(CheckFailure("waitTimeoutSeconds", problem))
        for key in ("waitForCompletion", "protect"):
            if news.get(key) not in (None, True, False, UNKNOWN):
                failures.append(CheckFailure(key, f"{news.get(key)!r}; allowed: true, false"))
        rails, rail_problems = guardrails_of(news.get("guardrails"))
        failures += [CheckFailure("guardrails", str(p)) for p in rail_problems]
        unknown = list(_unknown_paths(new.job))
        judged: Judged | None = None
        try:
            if news.get("job") != UNKNOWN:  # wholly unknown at preview (a secret job with Outputs): judged at up
                judged = judge_wire(known_only(new.job, _is_unknown), backend=new.backend,
                                    job_id=preview_job_id(new.name))
                failures.extend(_failures(judged.problems, unknown))
        except SpecError as error:  # it does not parse
            failures.extend(_failures(error.problems, unknown))
        inputs.pop("jobId", None)  # drawn at create (a new one for each new job), an output only
        if judged is not None and judged.body is not None and new.backend in BACKENDS:
            name = new.name or "job"
            region = None if _is_unknown(new.region) else new.region  # unknown at preview: the cost cap waits
            failures += [CheckFailure(p.path, p.message)
                         for p in job_rule_problems(judged.body, name, judged.job.labels, rails, today(), region)]
            pulumi.log.info(cost_line(judged.body, name, region))
        return CheckResult(inputs, failures)

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = _Inputs.of(olds), _Inputs.of(news)
        replaces = [key for key in REPLACING if canonical(olds.get(key)) != canonical(news.get(key))]
        if spec_of(old.job) != spec_of(new.job):
            replaces.append("job")
        labels_changed = canonical(old.job.get("labels")) != canonical(new.job.get("labels"))
        if labels_changed and "job" not in replaces and new.backend in BACKENDS \
                and not get_backend(new.backend).supports_label_update:
            replaces.append("job")
        # `identity` is not compared: it labels the job at create, and a renamed stack keeps its jobs.
        others = [k for k in IN_PLACE if canonical(olds.get(k)) != canonical(news.get(k))]
        if replaces:
            self._guard_active(id_, old, Protection.of(olds, news), replacing=True)
        changed = bool(replaces or labels_changed or others)
        # No `stables`: Python dynamic providers do not forward them (pulumi/dynamic/__main__.py).
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def _guard_active(self, id_: str, old: _Inputs, protection: Protection, *, replacing: bool) -> None:
        """Warn before replacing an active job; fail instead when it is protected. The last known state is read
        again from the API when it says active (a preview's state may be days old); kept if that read fails."""
        standing = Standing.of(old.props)
        if standing.active and id_:
            try:
                jobs = self._jobs(old)
                resource = jobs.get(id_)
            except (ApiError, TransportError, ValueError) as error:
                pulumi.log.debug(f"could not read job {id_} again ({error}); judging its last known state")
            else:
                standing = Standing.of(self._outputs(jobs, resource, old.job_id)) if resource else Standing(None, None)
        warning, failure = verdict(old.name or id_, standing, protection, replacing=replacing)
        if failure is not None:
            raise ProtectedJobError(failure)
        if warning is not None:
            pulumi.log.warn(warning)

    # -- create, read, update, delete ------------------------------------------------------------

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The resource's one live job: adopted when a live job carries its identity labels, else created."""
        inputs = _Inputs.of(props)
        if not inputs.identity:
            raise ValueError("a TrainingJob needs its `identity` input (set by TrainingJob from the stack and "
                             "resource name): without it a re-run could not find the job")
        # Parsed, translated and rendered once; judged by `check`, which the engine runs before every create.
        judged = judge_wire(inputs.job, backend=inputs.backend, judge=False).checked()
        model = judged.job
        assert isinstance(model, Job | VertexJob)  # the `job` input's two vocabularies (job_wire)
        jobs = self._jobs(inputs, model)
        job_id = new_job_id(inputs.name or "job")
        labels = inputs.labels(job_id, model)
        body = judged.body_for(job_id, labels)
        resource = jobs.create(job_id, body, {k: labels[k] for k in (RESOURCE_LABEL, SPEC_LABEL)})
        job_id = jobs.backend.job_id_of(resource) or job_id  # the adopted job's own id
        resource = self._maybe_wait(jobs, inputs, job_id, resource)
        outs = {**props, **self._outputs(jobs, resource, job_id)}
        return CreateResult(outs["resourceName"], outs)

    def _maybe_wait(self, jobs: Jobs, inputs: _Inputs, job_id: str, resource: dict[str, Any]) -> dict[str, Any]:
        if not inputs.wait:
            return resource
        name = jobs.backend.name_of(jobs.target, job_id, resource)
        finished = jobs.wait(name, inputs.wait_timeout) or resource
        state = jobs.backend.state(finished)
        if state == "FAILED":
            message = jobs.backend.outputs(finished, jobs.target).get("errorMessage") or "no message"
            # Recorded, not raised: a raised create would leave the job out of state (orphaned).
            pulumi.log.error(f"training job {job_id} FAILED: {message}")
        elif state not in ("SUCCEEDED", "CANCELLED"):
            pulumi.log.warn(f"training job {job_id} still {state} after {inputs.wait_timeout:.0f}s; "
                            "recorded as it is (run `pulumi refresh` later)")
        return finished

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        inputs = _Inputs.of(props)
        jobs = self._jobs(inputs)
        resource = jobs.get(id_)
        if resource is None:
            return ReadResult("", {})
        return ReadResult(id_, {**props, **self._outputs(jobs, resource, inputs.job_id)})

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Labels only (everything else replaces); returns the full outputs so none vanish from state."""
        old, new = _Inputs.of(olds), _Inputs.of(news)
        jobs = self._jobs(new)
        resource: dict[str, Any] | None
        if canonical(old.job.get("labels")) != canonical(new.job.get("labels")):
            resource = jobs.relabel(id_, new.labels(old.job_id))  # the identity labels stay on
        else:
            resource = jobs.get(id_)
        outputs = self._outputs(jobs, resource, old.job_id) if resource else {k: olds.get(k) for k in OUTPUT_KEYS}
        return UpdateResult({**news, **outputs})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        """Cancel a running job; a finished one stays (ml v1 has no delete) or is removed (Vertex). A protected
        job that is still active is refused (the engine asks no provider before a delete, so here, at up)."""
        inputs = _Inputs.of(props)
        if Protection.of(props, None).any:
            self._guard_active(id_, inputs, Protection.of(props, None), replacing=False)
        self._jobs(inputs).stop(id_)


def _failures(problems: tuple[Problem, ...] | list[Problem], unknown: list[str]) -> list[CheckFailure]:
    """One CheckFailure per problem, leaving out those about values unknown at preview."""
    out = []
    for problem in problems:
        if any(problem.path == u or problem.path.startswith(u + ".") or problem.path.startswith(u + "[")
               for u in unknown):
            continue
        out.append(CheckFailure(f"job.{problem.path}" if problem.path else "job", problem.message))
    return out
