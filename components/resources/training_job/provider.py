"""The TrainingJob dynamic provider: check, diff, create, read, update and delete of one training job.

Jobs are immutable: any change to the spec replaces the job (a new id, the old job cancelled); a label
change updates in place where the API can patch labels (ml v1) and replaces where it cannot (Vertex).
The provider object is pickled into Pulumi state: it holds only the endpoint override read in
`configure`, never a client, a credential or an Output (see ARCHITECTURE.md).

Every job carries identity labels: `pulumi-resource` (a hash of the Pulumi organization, project, stack
and resource name, given as the `identity` input) and `pulumi-spec` (a hash of what the job runs). A
create first adopts a live job carrying both (one left by a run that died), so a resource never has two
live jobs; the job id's random suffix is drawn at create and read back from the job adopted.

The `job` input is either vocabulary (components.resources.training_job.inputs); `guardrails` and `protect` carry the
stack's rules, which check enforces per job and diff / delete enforce on active jobs (job_review).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult
from pulumi.runtime.rpc import UNKNOWN

from components import backends
from components.backends import get_backend
from components.backends.base import RESOURCE_LABEL, SPEC_LABEL, STACK_LABEL, Target
from components.backends.cloud_logging import Reader
from components.backends.lifecycle import Jobs
from components.backends.transport import ApiError, TransportError
from components.jobspec.core.errors import SpecError
from components.jobspec.core.names import BACKENDS, PAUSED_STATES
from components.jobspec.core.problems import Problem
from components.jobspec.load import Judged
from components.jobspec.render.bodies import AnyJob, job_labels
from components.jobspec.rules import today
from components.resources.fallbacks import placement_of, pools_held
from components.resources.provider_base import EndpointProvider, environment_failures
from components.resources.provider_log import say_once
from components.resources.training_job import runs as job_runs
from components.resources.training_job.input_checks import input_problems, seconds_problem
from components.resources.training_job.inputs import (
    canonical,
    judge_wire,
    known_only,
    parse_wire,
    preview_job_id,
    region_of,
    spec_of,
)
from components.resources.training_job.review import (
    ProtectedJobError,
    Protection,
    Standing,
    cost_line,
    guardrails_of,
    job_rule_problems,
    replacing_active_job,
)
from components.resources.training_job.runs import rerun_of
from components.resources.training_job.tries import check_runs, create_runs, run_again_if_failed
from components.resources.training_job.watch import WaitReport, cost_usd

#: Inputs whose change forces a new job (besides the spec, and labels where they cannot be patched); `rerun` asks
#: for a fresh run of the same spec (job_runs).
REPLACING = ("project", "backend", "rerun")
#: Inputs that change in place (recorded by update; no API call but a read): adding or editing `fallbacks` or
#: `retries` never replaces a job.
IN_PLACE = ("name", "waitForCompletion", "waitTimeoutSeconds", "guardrails", "protect", "fallbacks", "retries",
            "deleteRecordOnDelete")
#: Outputs read back from the API.
OUTPUT_KEYS = ("jobId", "resourceName", "state", "backendState", "createTime", "startTime", "endTime",
               "errorMessage", "trainingOutput", "consoleUrl", "trialCount", "bestTrial", "costUsd", "placement",
               "retryCount", "waitFailure")
#: The output that turns a waiting `pulumi up` red: the error of the FAILED job it waited for (set by create, cleared
#: by the next update: TrainingJob raises on it once its outputs resolve, after the job is recorded in the state).
WAIT_FAILURE = "waitFailure"
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


def region_in(name: str | None) -> str | None:
    """The location of a Vertex AI resource name (projects/P/locations/R/...); None for another name."""
    found = re.match(r"projects/[^/]+/locations/([^/]+)/", name or "")
    return found.group(1) if found else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:IDENTITY_HEX]


def identity_labels(identity: str, job: dict[str, Any], backend: str, parsed: AnyJob | None = None,
                    rerun: str | None = None) -> dict[str, str]:
    """The labels a live job of this resource and spec is found by: `pulumi-resource` (whose job) and
    `pulumi-spec` (what it runs; with its labels on Vertex, where a label change makes a new job; with its `rerun`
    token when one is set, so that a fresh run never adopts the run it replaces). `parsed`: the job already parsed,
    when the caller has it."""
    spec: dict[str, Any] = {"spec": spec_of(job, parsed)}
    if backend in BACKENDS and not get_backend(backend).supports_label_update:
        spec["labels"] = canonical(job.get("labels") or {})
    if rerun is not None:
        spec["rerun"] = rerun
    return {RESOURCE_LABEL: _digest(identity), SPEC_LABEL: _digest(json.dumps(spec, sort_keys=True))}


def resource_label(identity: str) -> dict[str, str]:
    """The `pulumi-resource` label of a resource identity (organization/project/stack/name), as identity_labels."""
    return {RESOURCE_LABEL: _digest(identity)}


def stack_label(project: str, stack: str) -> dict[str, str]:
    """The label that finds a stack's jobs (`pulumi-stack`): a hash of the Pulumi project and stack. Not part of
    what makes a job change (neither in `pulumi-spec` nor compared by diff)."""
    return {STACK_LABEL: _digest(f"{project}/{stack}")}


def stack_label_of(identity: str) -> dict[str, str]:
    """The stack label of a resource identity (organization/project/stack/name); none for another form."""
    parts = identity.split("/", 3)
    return stack_label(parts[1], parts[2]) if len(parts) == 4 and parts[1] and parts[2] else {}


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
            wait_timeout=float(timeout) if seconds_problem(timeout) is None and timeout else DEFAULT_WAIT_TIMEOUT,
            props=props,
        )

    @property
    def region(self) -> str:
        return region_of(self.job)

    def parsed(self) -> AnyJob:
        return parse_wire(self.job)

    def labels(self, job_id: str, parsed: AnyJob | None = None) -> dict[str, str]:
        """The labels the job is created (or relabelled) with: the user's, its id's, its identity and its stack's."""
        parsed = parsed if parsed is not None else self.parsed()
        return {**job_labels(parsed, job_id),
                **identity_labels(self.identity, self.job, self.backend, parsed, rerun_of(self.props.get("rerun"))),
                **stack_label_of(self.identity)}


class TrainingJobProvider(EndpointProvider):
    """CRUD for training jobs on the backend named in the inputs (ai-platform or vertex)."""

    # -- helpers ---------------------------------------------------------------------------------

    #: The clock and sleep of the lifecycle's retries, reconcile window and waits. Class attributes, never
    #: state: the provider is pickled into Pulumi state and must stay tiny (a test puts fakes on an instance).
    clock: Callable[[], float] = staticmethod(time.monotonic)
    sleep: Callable[[float], None] = staticmethod(time.sleep)
    #: The wall clock (epoch seconds) a running job's cost so far is counted to; a class attribute, like clock.
    wall_clock: Callable[[], float] = staticmethod(time.time)

    def _jobs(self, inputs: _Inputs, job: AnyJob | None = None, *, name: str | None = None) -> Jobs:
        """The lifecycle at the job's target: the region of `name` (a Vertex AI job's resource name: a fallback
        may run elsewhere than the job as written), else the job's own."""
        return self._jobs_at(inputs, region_in(name) or inputs.region, job)

    def _jobs_at(self, inputs: _Inputs, region: str, job: AnyJob | None = None) -> Jobs:
        target = Target(inputs.project, region, self._endpoint())
        chosen = backends.backend_for(inputs.backend, job if job is not None else inputs.job)
        return Jobs(chosen, target, log=lambda msg: pulumi.log.info(msg), clock=self.clock, sleep=self.sleep)

    def _outputs(self, jobs: Jobs, resource: dict[str, Any], job_id: str = "") -> dict[str, Any]:
        backend = jobs.backend
        job_id = backend.job_id_of(resource) or job_id
        pools = pools_held(resource)  # the job as the API holds it, read once (it may run at a fallback)
        return {
            "jobId": job_id,
            "resourceName": backend.name_of(jobs.target, job_id, resource),
            "state": backend.state(resource),
            "backendState": resource.get("state"),
            **backend.outputs(resource, jobs.target),
            "costUsd": cost_usd(resource, jobs.target.region, self.wall_clock(), pools),
            "placement": placement_of(job_runs.placement_index(resource), resource, jobs.target.region, pools),
            "retryCount": job_runs.retry_number(resource),
        }

    # -- check and diff --------------------------------------------------------------------------

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        if env_failures := environment_failures():  # the variables the job is judged and sent with
            return CheckResult(dict(news), env_failures)
        # every input's type and range (input_checks, as TrainingJob judges them in the program); only UNKNOWN passes
        judged_inputs = input_problems(news)
        failures = [CheckFailure(key, problem) for key, problem in judged_inputs if key == "backend"]
        inputs = dict(news)
        new = _Inputs.of(news)
        if not news.get("backend"):
            failures.append(CheckFailure("backend", f"required; allowed: {', '.join(BACKENDS)}"))
        if not new.project:
            failures.append(CheckFailure("project", "required: the Google Cloud project id"))
        if not new.identity:
            failures.append(CheckFailure("identity", "required: the resource's identity (organization/project/"
                                         "stack/name), which labels its job so that a re-run finds it"))
        failures += [CheckFailure(key, problem) for key, problem in judged_inputs if key != "backend"]
        rails, rail_problems = guardrails_of(news.get("guardrails"))
        failures += [CheckFailure("guardrails", str(p)) for p in rail_problems]
        unknown = list(_unknown_paths(new.job))
        judged: Judged | None = None
        try:
            if news.get("job") != UNKNOWN:  # wholly unknown at preview (a secret job with Outputs): judged at up
                judged = judge_wire(known_only(new.job, _is_unknown), backend=new.backend,
                                    job_id=preview_job_id(new.name))
                failures.extend(_failures(judged.problems, unknown))
                for warning in judged.warnings:  # what the translation changed (a TPU job's unused master)
                    pulumi.log.warn(f"job {new.name or 'job'}: {warning}")
        except SpecError as error:  # it does not parse
            failures.extend(_failures(error.problems, unknown))
        inputs.pop("jobId", None)  # drawn at create (a new one for each new job), an output only
        if judged is not None and judged.body is not None and new.backend in BACKENDS:
            name = new.name or "job"
            region = None if _is_unknown(new.region) else new.region  # unknown at preview: the cost cap waits
            failures += [CheckFailure(p.path, p.message)
                         for p in job_rule_problems(judged.body, name, judged.job.labels, rails, today(), region,
                                                    judged.pools)]
            # said once: not again in the preview's summary (provider_log)
            say_once(cost_line(judged.body, name, region, judged.pools))
        # fallbacks judged, guardrailed and priced like the job; retries and rerun; quotas (provider_runs)
        failures += check_runs(self, olds, news, judged, rails, None if _is_unknown(new.region) else new.region,
                               resource_label(new.identity)[RESOURCE_LABEL],
                               stack_label_of(new.identity).get(STACK_LABEL, ""))
        return CheckResult(inputs, failures)

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old = _Inputs.of(olds)
        found = changes_of(olds, news)
        replaces, labels_changed, others = list(found.replaces), found.labels_changed, found.in_place
        if replaces:
            self._guard_active(id_, old, Protection.of(olds, news), replacing=True)
        elif run_again_if_failed(self, id_, old, news):  # FAILED for Google's reasons, retries left (read from the API)
            replaces.append("state")
        # A failure the last `up` waited for is reported once: this update clears it (no API call but a read), and
        # the job stays as it is (a failure of the user's code is never made again on its own: job_runs.verdict).
        changed = bool(replaces or labels_changed or others or olds.get(WAIT_FAILURE))
        # No `stables`: Python dynamic providers do not forward them (pulumi/dynamic/__main__.py).
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def _guard_active(self, id_: str, old: _Inputs, protection: Protection, *, replacing: bool) -> None:
        """Warn before replacing an active job; fail instead when it is protected. The last known state is read
        again from the API when it says active (a preview's state may be days old); kept if that read fails."""
        standing = Standing.of(old.props)
        if standing.active and id_:
            try:
                jobs = self._jobs(old, name=id_)
                resource = jobs.get(id_)
            except (ApiError, TransportError, ValueError) as error:
                pulumi.log.debug(f"could not read job {id_} again ({error}); judging its last known state")
            else:
                standing = Standing.of(self._outputs(jobs, resource, old.job_id)) if resource else Standing(None, None)
        warning, failure = replacing_active_job(old.name or id_, standing, protection, replacing=replacing)
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
        # Each placement parsed, translated and rendered once (judged by `check`, which the engine runs before every
        # create); a live job of the resource adopted wherever it runs; fallbacks and retries (provider_runs).
        jobs, resource, job_id = create_runs(self, inputs)
        outs = {**props, **self._outputs(jobs, resource, job_id)}
        if inputs.wait and outs["state"] == "FAILED":  # recorded with the job; TrainingJob fails the update on it
            outs[WAIT_FAILURE] = f"training job {outs['jobId']} FAILED: {outs.get('errorMessage') or 'no message'}"
        return CreateResult(outs["resourceName"], outs)

    def _maybe_wait(self, jobs: Jobs, inputs: _Inputs, job_id: str, resource: dict[str, Any], *,
                    again: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
        """Wait for the job when asked; `again`: whether a FAILED job is made again (then a warning, not an error)."""
        if not inputs.wait:
            return resource
        name = jobs.backend.name_of(jobs.target, job_id, resource)
        report = WaitReport(Reader(jobs.target.project, self._endpoint(), sleep=self.sleep), job_id,
                            jobs.backend.state, self.clock, pulumi.log.info, pulumi.log.warn)
        finished = jobs.wait(name, inputs.wait_timeout, on_poll=report.poll) or resource
        state = jobs.backend.state(finished)
        if state == "FAILED":
            message = jobs.backend.outputs(finished, jobs.target).get("errorMessage") or "no message"
            # Recorded, not raised: a raised create would leave the job out of state (orphaned). The create's
            # `waitFailure` output fails the update instead, once the job is recorded (TrainingJob).
            (pulumi.log.warn if again is not None and again(finished) else pulumi.log.error)(
                report.failure(finished, message))
        elif state in PAUSED_STATES:  # it waits for someone to resume it: waiting on would only run out the timeout
            pulumi.log.warn(f"training job {job_id} is PAUSED: stopped waiting; resume it in Vertex AI, or cancel it "
                            "(`pulumi destroy`, or replace it); recorded as it is")
        elif state not in ("SUCCEEDED", "CANCELLED"):
            pulumi.log.warn(f"training job {job_id} still {state} after {inputs.wait_timeout:.0f}s; "
                            "recorded as it is (run `pulumi refresh` later)")
        return finished

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        inputs = _Inputs.of(props)
        jobs = self._jobs(inputs, name=id_)
        resource = jobs.get(id_)
        if resource is None:
            return ReadResult("", {})
        return ReadResult(id_, {**props, **self._outputs(jobs, resource, inputs.job_id)})

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Labels only (everything else replaces); returns the full outputs so none vanish from state."""
        old, new = _Inputs.of(olds), _Inputs.of(news)
        jobs = self._jobs(new, name=id_)
        resource: dict[str, Any] | None
        if canonical(old.job.get("labels")) != canonical(new.job.get("labels")):
            current = jobs.get(id_) or {}  # the identity labels stay on, and the run's (placement, retry)
            kept = job_runs.run_labels(job_runs.placement_index(current), job_runs.retry_number(current))
            resource = jobs.relabel(id_, {**new.labels(old.job_id), **kept})
        else:
            resource = jobs.get(id_)
        outputs = self._outputs(jobs, resource, old.job_id) if resource else \
            {k: olds.get(k) for k in OUTPUT_KEYS if k != WAIT_FAILURE}
        return UpdateResult({**news, **outputs, WAIT_FAILURE: None})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        """Cancel a job still active; leave every job record on the API (the job's history: `status --all`, `spend`,
        its console page and logs), unless `deleteRecordOnDelete` is true, where a finished Vertex AI job's record is
        removed (ml v1 has no delete). A protected job that is still active is refused (the engine asks no provider
        before a delete, so here, at up). A state written by an older release runs this method too: its pickle
        imports this class by its module path; its inputs have no `deleteRecordOnDelete`, so its records stay."""
        inputs = _Inputs.of(props)
        if Protection.of(props, None).any:
            self._guard_active(id_, inputs, Protection.of(props, None), replacing=False)
        self._jobs(inputs, name=id_).stop(id_, delete_record=props.get("deleteRecordOnDelete") is True)


#: Pickled by reference into every state under its first path: components/resources/job_provider.py re-exports
#: the class there, so existing states unpickle to it and new ones name the same path.
TrainingJobProvider.__module__ = "components.resources.job_provider"


@dataclass(frozen=True)
class Changes:
    """What a change of a job's inputs does, as the provider's diff decides it: the inputs that make a new job
    (`replaces`), whether its labels changed, and the inputs changed in place (`in_place`)."""

    replaces: tuple[str, ...]
    labels_changed: bool
    in_place: tuple[str, ...]

    @property
    def any(self) -> bool:
        return bool(self.replaces or self.labels_changed or self.in_place)


def changes_of(olds: dict[str, Any], news: dict[str, Any]) -> Changes:
    """The provider's diff from the inputs alone (no API call): a changed spec, project, backend or rerun makes a
    new job; a label change too where the API cannot patch labels (Vertex). `diff` (and `python -m components
    diff`, offline) decide with it."""
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
    return Changes(tuple(replaces), labels_changed, tuple(others))


def _failures(problems: tuple[Problem, ...] | list[Problem], unknown: list[str]) -> list[CheckFailure]:
    """One CheckFailure per problem, leaving out those about values unknown at preview."""
    out = []
    for problem in problems:
        if any(problem.path == u or problem.path.startswith(u + ".") or problem.path.startswith(u + "[")
               for u in unknown):
            continue
        out.append(CheckFailure(f"job.{problem.path}" if problem.path else "job", problem.message))
    return out
