"""The TrainingJob dynamic provider: check, diff, create, read, update and delete of one training job.

Jobs are immutable: any change to the spec replaces the job (a new id, the old job cancelled); a label
change updates in place where the API can patch labels (ml v1) and replaces where it cannot (Vertex).
The provider object is pickled into Pulumi state: it holds only the endpoint override read in
`configure`, never a client, a credential or an Output (see ARCHITECTURE.md). The engine's provider process
configures one instance per pickle, and every TrainingJob pickles alike, so one instance serves every job from
several threads at once: no method writes to it after `configure` (what a run shares is `backends/run_cache.RUN`).

Every job carries identity labels (`identity`: whose job, and what it runs). A create first adopts a live job
carrying both (one left by a run that died), so a resource never has two live jobs; the job id's random suffix is
drawn at create and read back from the job adopted.

The inputs are read once (`inputs`); `guardrails` and `protect` carry the stack's rules, which check enforces per
job and diff / delete enforce on active jobs (`review`); fallbacks, retries and the quota check are `tries`'. Each
module is handed values (the inputs read, the endpoint, where the jobs are reached), never the provider.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Iterator
from typing import Any

from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult
from pulumi.dynamic.dynamic import PROVIDER_KEY

from gcp_training_jobs.backends.cloud_logging import Reader
from gcp_training_jobs.backends.lifecycle import Jobs, NotDeclared
from gcp_training_jobs.backends.transport import ApiError, TransportError
from gcp_training_jobs.jobspec.catalog.credentials import masked_text
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import BACKENDS, CANCELLED, FAILED, PAUSED_STATES, SUCCEEDED
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.load import Judged
from gcp_training_jobs.jobspec.rules import today
from gcp_training_jobs.jobspec.translate.facts import facts_of_body
from gcp_training_jobs.resources import provider_log as log
from gcp_training_jobs.resources.fallbacks import placement_of
from gcp_training_jobs.resources.job_model import runs
from gcp_training_jobs.resources.job_model.declared import (
    BACKEND,
    BACKEND_STATE,
    COST_USD,
    ERROR_MESSAGE,
    IDENTITY,
    JOB_ID,
    NAME,
    OUTPUT_KEYS,
    PLACEMENT,
    PROJECT,
    RESOURCE_NAME,
    RETRY_COUNT,
    STATE,
    WAIT_FAILURE,
)
from gcp_training_jobs.resources.job_model.identity import labels_of
from gcp_training_jobs.resources.job_model.inputs import (
    Inputs,
    canonical,
    input_problems,
    judge_wire,
    known_only,
    preview_job_id,
    unknown,
)
from gcp_training_jobs.resources.job_model.protection import Protection
from gcp_training_jobs.resources.job_model.runs import changes_of
from gcp_training_jobs.resources.provider_base import EndpointProvider, environment_failures
from gcp_training_jobs.resources.provider_log import say_once
from gcp_training_jobs.resources.training_job.plan import StackAsks, asks_of
from gcp_training_jobs.resources.training_job.review import (
    ProtectedJobError,
    Standing,
    WaitReport,
    budget_input_problems,
    cost_line,
    cost_usd,
    job_rule_problems,
    replacing_active_job,
)
from gcp_training_jobs.resources.training_job.tries import (
    JobsAt,
    check_runs,
    create_runs,
    declared_of,
    run_again_if_failed,
)


def _unknown_paths(value: Any, path: str = "") -> Iterator[str]:
    if unknown(value):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unknown_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unknown_paths(item, f"{path}[{i}]")


class TrainingJobProvider(EndpointProvider):
    """CRUD for training jobs on the backend named in the inputs (ai-platform or vertex)."""

    # -- helpers ---------------------------------------------------------------------------------

    #: The clock and sleep of the lifecycle's retries, reconcile window and waits. Class attributes, never
    #: state: the provider is pickled into Pulumi state and must stay tiny (a test puts fakes on an instance).
    clock: Callable[[], float] = staticmethod(time.monotonic)
    sleep: Callable[[float], None] = staticmethod(time.sleep)
    #: The wall clock (epoch seconds) a running job's cost so far is counted to; a class attribute, like clock.
    wall_clock: Callable[[], float] = staticmethod(time.time)

    def _reach(self, inputs: Inputs) -> JobsAt:
        """Where this resource's jobs are reached: its project and backend, at this provider's endpoint and clock."""
        return JobsAt(inputs.project, inputs.backend, inputs.region, inputs.job, self._endpoint(), self.clock,
                      self.sleep)

    def _outputs(self, jobs: Jobs, resource: dict[str, Any], job_id: str = "") -> dict[str, Any]:
        backend = jobs.backend
        job_id = backend.job_id_of(resource) or job_id
        facts = facts_of_body(resource, region=jobs.target.region)  # as the API holds it (it may run at a fallback)
        return {
            JOB_ID: job_id,
            RESOURCE_NAME: backend.name_of(jobs.target, job_id, resource),
            STATE: backend.state(resource),
            BACKEND_STATE: resource.get("state"),  # (the API's field)
            **backend.outputs(resource, jobs.target),
            COST_USD: cost_usd(resource, facts, self.wall_clock()),
            PLACEMENT: placement_of(runs.placement_index(resource), facts),
            RETRY_COUNT: runs.retry_number(resource),
        }

    def _stack(self) -> StackAsks:
        """What the stack asks of the quotas and reservations, from the config `configure` kept (plan.asks_of)."""
        return asks_of(getattr(self, "stack_config", ()))

    # -- check and diff --------------------------------------------------------------------------

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        if env_failures := environment_failures():  # the variables the job is judged and sent with
            return CheckResult(dict(news), self._refused("TrainingJob", str(news.get(NAME.wire, "")), env_failures))
        # every input's type and range (inputs, as TrainingJob judges them in the program); only UNKNOWN passes
        judged_inputs = input_problems(news)
        failures = [CheckFailure(key, problem) for key, problem in judged_inputs if key == BACKEND.wire]
        inputs = dict(news)
        new = Inputs.of(news)
        if not news.get(BACKEND.wire):
            failures.append(CheckFailure(BACKEND.wire, f"required; allowed: {', '.join(BACKENDS)}"))
        if not new.project:
            failures.append(CheckFailure(PROJECT.wire, "required: the Google Cloud project id"))
        if not new.identity:
            failures.append(CheckFailure(IDENTITY.wire, "required: the resource's identity (organization/project/"
                                         "stack/name), which labels its job so that a re-run finds it"))
        failures += [CheckFailure(key, problem) for key, problem in judged_inputs if key != BACKEND.wire]
        failures += [CheckFailure(p.path, p.message) for p in new.guardrail_problems]
        unknown_paths = list(_unknown_paths(new.job))
        judged: Judged | None = None
        try:
            if not new.job_unknown:  # wholly unknown at preview (a secret job with Outputs): judged at up
                judged = judge_wire(known_only(new.job, unknown), backend=new.backend,
                                    job_id=preview_job_id(new.name))
                failures.extend(_failures(judged.problems, unknown_paths))
                for warning in judged.warnings:  # what the translation changed, a credential: once in a run
                    log.warn_once(f"job {new.name or 'job'}: {warning}")
        except SpecError as error:  # it does not parse
            failures.extend(_failures(error.problems, unknown_paths))
        inputs.pop(JOB_ID, None)  # drawn at create (a new one for each new job), an output only
        if judged is not None and judged.body is not None and new.backend in BACKENDS \
                and not (new.cheapest and new.fallbacks):  # a cheapest job is priced at its candidates: tries
            name = new.name or "job"  # a region unknown at preview is not in the facts: the cost cap waits
            falls_back = bool(new.fallbacks)  # priced at its worst placement: off any reservation (review.cost)
            failures += [CheckFailure(p.path, p.message) for p in job_rule_problems(judged.facts, name, new.guardrails,
                                                                                 today(), falls_back=falls_back)]
            failures += [CheckFailure(p.path, p.message) for p in budget_input_problems(
                judged.facts, name, new.budget, falls_back=falls_back)]
            # said once: not again in the preview's summary (provider_log)
            say_once(cost_line(judged.facts, name, falls_back=falls_back))
        # fallbacks judged, guardrailed and priced like the job; retries and the re-run token; quotas (tries)
        failures += check_runs(olds, new, judged, self._endpoint(), self._stack())
        return CheckResult(inputs, self._refused("TrainingJob", new.name, failures))  # the project's own lines

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old = Inputs.of(olds)
        found = changes_of(olds, news)
        replaces, labels_changed, others = list(found.replaces), found.labels_changed, found.in_place
        if replaces:
            self._guard_active(id_, old, Protection.of(olds, news), replacing=True)
        elif run_again_if_failed(id_, old, Inputs.of(news).retries, self._reach(old)):  # FAILED, Google's fault
            replaces.append(STATE)
        # A failure the last `up` waited for is reported once: this update clears it (no API call but a read), and
        # the job stays as it is (a failure of the user's code is never made again on its own: runs).
        # A state whose outputs pickle the provider under another path (a release before the library's rename) is
        # updated in place, with no API call but a read: the engine deletes and reads a job with the provider its
        # outputs hold, and only an update writes this path there (a `same` step keeps the old outputs). So is a
        # state with no pickle at all under the dynamic resource (news carry one): the package's, moved back by
        # TrainingJob's alias to the package's type (the package's own calls carry none).
        unpickled = PROVIDER_KEY in news and PROVIDER_KEY not in olds
        changed = bool(replaces or labels_changed or others or olds.get(WAIT_FAILURE)
                       or pickled_elsewhere(olds.get(PROVIDER_KEY)) or unpickled)
        # No `stables`: Python dynamic providers do not forward them (pulumi/dynamic/__main__.py).
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def _guard_active(self, id_: str, old: Inputs, protection: Protection, *, replacing: bool) -> None:
        """Warn before replacing an active job; fail instead when it is protected. The last known state is read
        again from the API when it says active (a preview's state may be days old); kept if that read fails."""
        standing = Standing.of(old.props)
        if standing.active and id_:
            try:
                jobs = self._reach(old).of_name(id_)
                resource = jobs.get(id_)
            except (ApiError, TransportError, ValueError) as error:
                log.debug(f"could not read job {id_} again ({error}); judging its last known state")
            else:
                standing = Standing.of(self._outputs(jobs, resource, old.job_id)) if resource else Standing(None, None)
        warning, failure = replacing_active_job(old.name or id_, standing, protection, replacing=replacing)
        if failure is not None:
            raise ProtectedJobError(failure)
        if warning is not None:
            log.warn(warning)

    # -- create, read, update, delete ------------------------------------------------------------

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The resource's one live job: adopted when a live job carries its identity labels, else created."""
        inputs = Inputs.of(props)
        if not inputs.identity:
            raise ValueError("a TrainingJob needs its `identity` input (set by TrainingJob from the stack and "
                             "resource name): without it a re-run could not find the job")
        # Each placement parsed, translated and rendered once (judged by `check`, which the engine runs before every
        # create); a live job of the resource adopted wherever it runs; fallbacks and retries (tries).
        jobs, resource, job_id = create_runs(
            inputs, self._reach(inputs),
            lambda jobs, job_id, resource, again: self._maybe_wait(jobs, inputs, job_id, resource, again=again),
            self._stack())
        outs = {**props, **self._outputs(jobs, resource, job_id)}
        if inputs.wait and outs["state"] == FAILED:  # recorded with the job; TrainingJob fails the update on it
            outs[WAIT_FAILURE] = masked_text(f"training job {outs['jobId']} FAILED: "
                                             f"{outs.get('errorMessage') or 'no message'}")
        return CreateResult(outs[RESOURCE_NAME], outs)

    def _maybe_wait(self, jobs: Jobs, inputs: Inputs, job_id: str, resource: dict[str, Any], *,
                    again: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
        """Wait for the job when asked; `again`: whether a FAILED job is made again (then a warning, not an error)."""
        if not inputs.wait:
            return resource
        name = jobs.backend.name_of(jobs.target, job_id, resource)
        report = WaitReport(Reader(jobs.target.project, self._endpoint(), sleep=self.sleep), job_id,
                            jobs.backend.state, self.clock, log.info, log.warn)
        finished = jobs.wait(name, inputs.wait_timeout, on_poll=report.poll) or resource
        state = jobs.backend.state(finished)
        if state == FAILED:
            message = jobs.backend.outputs(finished, jobs.target).get(ERROR_MESSAGE) or "no message"
            # Recorded, not raised: a raised create would leave the job out of state (orphaned). The create's
            # `waitFailure` output fails the update instead, once the job is recorded (TrainingJob).
            (log.warn if again is not None and again(finished) else log.error)(
                report.failure(finished, message))
        elif state in PAUSED_STATES:  # it waits for someone to resume it: waiting on would only run out the timeout
            log.warn(f"training job {job_id} is PAUSED: stopped waiting; resume it in Vertex AI, or cancel it "
                            "(`pulumi destroy`, or replace it); recorded as it is")
        elif state not in (SUCCEEDED, CANCELLED):
            log.warn(f"training job {job_id} still {state} after {inputs.wait_timeout:.0f}s; "
                            "recorded as it is (run `pulumi refresh` later)")
        return finished

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        inputs = Inputs.of(props)
        jobs = self._reach(inputs).of_name(id_)
        resource = jobs.get(id_)
        if resource is None:
            return ReadResult("", {})
        if (why := _not_declared(inputs, resource)) is not None:  # never "unchanged" for an impostor
            raise NotDeclared(f"job {inputs.job_id or id_} ({id_}) in the state of {inputs.name or 'this resource'} is "
                              f"not the job the stack declares ({why}): it was not changed or cancelled; if it is not "
                              "wanted, cancel it, and drop it from the state (`pulumi state delete`)")
        return ReadResult(id_, {**props, **self._outputs(jobs, resource, inputs.job_id)})

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Labels only (everything else replaces); returns the full outputs so none vanish from state."""
        old, new = Inputs.of(olds), Inputs.of(news)
        jobs = self._reach(new).of_name(id_)
        resource: dict[str, Any] | None
        if canonical(old.job.get("labels")) != canonical(new.job.get("labels")):
            current = jobs.get(id_) or {}  # the identity labels stay on, and the run's (placement, retry)
            kept = runs.run_labels(runs.placement_index(current), runs.retry_number(current))
            resource = jobs.relabel(id_, {**labels_of(new, old.job_id), **kept})
        else:
            resource = jobs.get(id_)
        outputs = self._outputs(jobs, resource, old.job_id) if resource else \
            {k: olds.get(k) for k in OUTPUT_KEYS if k != WAIT_FAILURE}
        return UpdateResult({**news, **outputs, WAIT_FAILURE: None})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        """Cancel a job still active; leave every job record on the API (the job's history: `status --all`, `spend`, its
        console page and logs), unless its input asks it (TrainingJobArgs.delete_record_on_delete), where a finished
        Vertex AI job's record is removed (ml v1 has no delete). A protected job that is still active is refused (the
        engine asks no provider before a delete, so here, at up). A state written by an older release runs this method
        too: its pickle imports this class by its module path; its inputs do not ask it, so its records stay."""
        inputs = Inputs.of(props)
        if Protection.of(props, None).any:
            self._guard_active(id_, inputs, Protection.of(props, None), replacing=False)
        self._reach(inputs).of_name(id_).stop(id_, delete_record=inputs.delete_record)


def _not_declared(inputs: Inputs, resource: dict[str, Any]) -> str | None:
    """Why the job read is not the one the state's inputs declare (tries.declared_of), or None; a job input this
    release cannot render (a state of an older release) is not compared."""
    if not inputs.job:
        return None
    try:
        return declared_of(inputs)(resource)
    except (SpecError, ValueError) as error:
        log.debug(f"job {inputs.name}: not compared with the job the stack declares ({error})")
        return None


def pickled_elsewhere(pickled: Any) -> bool:
    """Whether a state's pickled provider (`__provider`: base64 of the pickle) names a path other than this
    provider's (TrainingJobProvider.__module__): a state written before the provider's path moved."""
    if not isinstance(pickled, str) or not pickled or unknown(pickled):
        return False
    try:
        data = base64.b64decode(pickled, validate=True)
    except (binascii.Error, ValueError):
        return False
    return TrainingJobProvider.__module__.encode() not in data


#: Pickled by reference into every state under its first path: gcp_training_jobs/resources/job_provider.py re-exports
#: the class there, so existing states unpickle to it and new ones name the same path.
TrainingJobProvider.__module__ = "gcp_training_jobs.resources.job_provider"


def _failures(problems: tuple[Problem, ...] | list[Problem], unknown_paths: list[str]) -> list[CheckFailure]:
    """One CheckFailure per problem, leaving out those about values unknown at preview."""
    out = []
    for problem in problems:
        if any(problem.path == u or problem.path.startswith(u + ".") or problem.path.startswith(u + "[")
               for u in unknown_paths):
            continue
        out.append(CheckFailure(f"job.{problem.path}" if problem.path else "job", problem.message))
    return out
