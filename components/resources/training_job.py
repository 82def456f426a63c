"""TrainingJob: a training job as a Pulumi resource, driven by a Python dynamic provider.

Jobs are immutable: any change to the spec replaces the job (a new id, the old job cancelled); a label
change updates in place where the API can patch labels (ml v1) and replaces where it cannot (Vertex).
The provider object is pickled into Pulumi state: it holds only the endpoint override read in
`configure`, never a client, a credential or an Output (see ARCHITECTURE.md).

Every job carries identity labels: `pulumi-resource` (a hash of the Pulumi organization, project, stack
and resource name, given as the `identity` input) and `pulumi-spec` (a hash of what the job runs). A
create first adopts a live job carrying both (one left by a run that died), so a resource never has two
live jobs; the job id's random suffix is drawn at create and read back from the job adopted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    UpdateResult,
)
from pulumi.runtime.rpc import UNKNOWN

from components.backends import get_backend
from components.backends.base import RESOURCE_LABEL, SPEC_LABEL, Target
from components.backends.lifecycle import Jobs
from components.jobspec.errors import SpecError
from components.jobspec.load import load_job
from components.jobspec.models import Job, job_body, parse_job
from components.jobspec.names import BACKENDS, DEFAULT_BACKEND, JOB_ID_SUFFIX_HEX, JOB_NAME_MAX
from components.jobspec.problems import Problem
from components.jobspec.render import job_labels
from components.resources.args import resolve_args
from components.resources.provider_base import EndpointProvider

#: Inputs whose change forces a new job (besides the spec, and labels where they cannot be patched).
REPLACING = ("project", "backend")
#: Outputs read back from the API.
OUTPUT_KEYS = ("jobId", "resourceName", "state", "backendState", "createTime", "startTime", "endTime",
               "errorMessage", "trainingOutput", "consoleUrl")
#: Hex digits of the identity label values (80 bits).
IDENTITY_HEX = 20
#: Placeholders that stand in for values unknown at preview, so the rest of the spec is still judged.
PREVIEW_URI = "gs://unknown-at-preview/unknown"
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


def _known_only(value: Any, uri_fields: tuple[str, ...] = ("packageUris", "jobDir")) -> Any:
    """The job with unknown values replaced by placeholders (URIs) or left out (anything else)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if item == UNKNOWN:
                if key in uri_fields:
                    out[key] = [PREVIEW_URI] if key == "packageUris" else PREVIEW_URI
                continue
            out[key] = _known_only(item, uri_fields)
        return out
    if isinstance(value, list):
        return [PREVIEW_URI if item == UNKNOWN else _known_only(item, uri_fields) for item in value]
    return value


def canonical(value: Any) -> Any:
    """Normalise for comparison: integral floats to ints (Pulumi sends 8 as 8.0), digit strings kept."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def spec_of(job: dict[str, Any]) -> Any:
    """What identifies a job's work: everything but its labels, in canonical form."""
    try:
        body = job_body(parse_job(job))
    except SpecError:
        body = dict(job)
    body.pop("labels", None)
    body.pop("jobId", None)
    return json.loads(json.dumps(canonical(body), sort_keys=True))


def new_job_id(name: str, suffix: str | None = None) -> str:
    """name + random suffix: ids can never be reused in a project, even after the job ends."""
    stem = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_") or "job"
    if not stem[0].isalpha():
        stem = f"job_{stem}"
    return f"{stem[:JOB_NAME_MAX]}_{suffix or secrets.token_hex(JOB_ID_SUFFIX_HEX // 2)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:IDENTITY_HEX]


def resource_identity(resource_name: str) -> str:
    """Who a job belongs to: the Pulumi organization, project, stack and resource name."""
    parts = (pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack(), resource_name)
    return "/".join(str(part or "") for part in parts)


def identity_labels(identity: str, job: dict[str, Any], backend: str) -> dict[str, str]:
    """The labels a live job of this resource and spec is found by: `pulumi-resource` (whose job) and
    `pulumi-spec` (what it runs; with its labels on Vertex, where a label change makes a new job)."""
    spec: dict[str, Any] = {"spec": spec_of(job)}
    if backend in BACKENDS and not get_backend(backend).supports_label_update:
        spec["labels"] = canonical(job.get("labels") or {})
    return {RESOURCE_LABEL: _digest(identity), SPEC_LABEL: _digest(json.dumps(spec, sort_keys=True))}


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
        )

    @property
    def region(self) -> str:
        return str((self.job.get("trainingInput") or {}).get("region", ""))

    def labels(self, job_id: str) -> dict[str, str]:
        """The labels the job is created (or relabelled) with: the user's, its id's and its identity."""
        return {**job_labels(parse_job(self.job), job_id), **identity_labels(self.identity, self.job, self.backend)}


def _seconds_problem(value: Any) -> str | None:
    """Why a waitTimeoutSeconds value is not a number of seconds (None: it is, or it is not set)."""
    if value is None or value == UNKNOWN:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of seconds; allowed: a finite number of seconds > 0, e.g. 3600"
    if not math.isfinite(value) or value <= 0:
        return f"{value!r}; allowed: a finite number of seconds > 0, e.g. 3600"
    return None


class TrainingJobProvider(EndpointProvider):
    """CRUD for training jobs on the backend named in the inputs (ai-platform or vertex)."""

    # -- helpers ---------------------------------------------------------------------------------

    def _jobs(self, inputs: _Inputs) -> Jobs:
        target = Target(inputs.project, inputs.region, self._endpoint())
        return Jobs(get_backend(inputs.backend), target, log=lambda msg: pulumi.log.info(msg))

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
        if news.get("waitForCompletion") not in (None, True, False, UNKNOWN):
            failures.append(CheckFailure("waitForCompletion", f"{news.get('waitForCompletion')!r}; allowed: true, "
                                         "false"))
        unknown = list(_unknown_paths(new.job)) or (["job"] if news.get("job") == UNKNOWN else [])
        job: Job | None = None
        try:
            job = load_job(_known_only(new.job))
        except SpecError as error:
            failures.extend(_failures(error.problems, unknown))
        inputs.pop("jobId", None)  # drawn at create (a new one for each new job), an output only
        if job is not None and new.backend in BACKENDS:
            sample = new_job_id(new.name or "job", "0" * JOB_ID_SUFFIX_HEX)
            try:
                get_backend(new.backend).render(job, sample, job_labels(job, sample))
            except SpecError as error:
                failures.extend(_failures(error.problems, unknown))
        return CheckResult(inputs, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = _Inputs.of(olds), _Inputs.of(news)
        replaces = [key for key in REPLACING if canonical(olds.get(key)) != canonical(news.get(key))]
        if spec_of(old.job) != spec_of(new.job):
            replaces.append("job")
        labels_changed = canonical(old.job.get("labels")) != canonical(new.job.get("labels"))
        if labels_changed and "job" not in replaces and new.backend in BACKENDS \
                and not get_backend(new.backend).supports_label_update:
            replaces.append("job")
        # `identity` is not compared: it labels the job at create, and a renamed stack keeps its jobs.
        others = [k for k in ("name", "waitForCompletion", "waitTimeoutSeconds")
                  if canonical(olds.get(k)) != canonical(news.get(k))]
        changed = bool(replaces or labels_changed or others)
        # No `stables`: Python dynamic providers do not forward them (pulumi/dynamic/__main__.py).
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    # -- create, read, update, delete ------------------------------------------------------------

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The resource's one live job: adopted when a live job carries its identity labels, else created."""
        inputs = _Inputs.of(props)
        if not inputs.identity:
            raise ValueError("a TrainingJob needs its `identity` input (set by TrainingJob from the stack and "
                             "resource name): without it a re-run could not find the job")
        jobs = self._jobs(inputs)
        job_id = new_job_id(inputs.name or "job")
        labels = inputs.labels(job_id)
        body = jobs.backend.render(parse_job(inputs.job), job_id, labels)
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
        """Cancel a running job; a finished one stays (ml v1 has no delete) or is removed (Vertex)."""
        inputs = _Inputs.of(props)
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


@dataclass
class TrainingJobArgs:
    """One training job: where, on which API, and the job itself."""

    project: pulumi.Input[str]
    """The Google Cloud project the job runs in."""
    job: pulumi.Input[dict[str, Any]]
    """The job in the seeds' vocabulary (a gcloud config.yaml Job: `{"trainingInput": {...}, "labels": ...}`);
    leaves may be Outputs (a package URI, a job dir)."""
    backend: pulumi.Input[str] = DEFAULT_BACKEND
    """vertex (Vertex AI custom jobs) or ai-platform (AI Platform Training v1)."""
    wait_for_completion: pulumi.Input[bool] = False
    """Whether create (and replace) waits until the job ends."""
    wait_timeout_seconds: pulumi.Input[float] | None = None
    """How long to wait at most (default: 24 hours)."""


class TrainingJob(Resource, module="training", name="TrainingJob"):
    """A training job on AI Platform Training (ml v1) or Vertex AI, from the seeds' job vocabulary."""

    # Outputs are attributes named as the properties (camelCase), as for every dynamic resource.
    jobId: pulumi.Output[str]
    """The job's id (name + random suffix; a new one whenever the job is replaced)."""
    resourceName: pulumi.Output[str]
    """The full API resource name (projects/P/jobs/ID, or projects/P/locations/R/customJobs/N)."""
    state: pulumi.Output[str]
    """QUEUED, PREPARING, RUNNING, SUCCEEDED, FAILED, CANCELLING or CANCELLED (both backends)."""
    consoleUrl: pulumi.Output[str]
    """The job's page in the Google Cloud console."""

    def __init__(self, resource_name: str, args: TrainingJobArgs | None = None,
                 opts: pulumi.ResourceOptions | None = None, **kwargs: Any) -> None:
        args = resolve_args(TrainingJobArgs, args, kwargs)
        if opts is not None and opts.import_:
            raise pulumi.RunError(
                f"TrainingJob {resource_name}: import_ cannot work for a Python dynamic resource (the engine "
                "reads an imported resource without its pickled provider: KeyError '__provider' in "
                "pulumi/dynamic/__main__.py). A live job of this resource is adopted by its labels on the next "
                "`pulumi up` instead; see the README, \"Recovering after a crash\"")
        props: dict[str, Any] = {
            "name": resource_name,
            "project": args.project,
            "backend": args.backend,
            "job": args.job,
            "waitForCompletion": args.wait_for_completion,
            "waitTimeoutSeconds": args.wait_timeout_seconds,
            "identity": resource_identity(resource_name),
        }
        props.update({key: None for key in OUTPUT_KEYS})
        super().__init__(TrainingJobProvider(), resource_name, props, opts)
