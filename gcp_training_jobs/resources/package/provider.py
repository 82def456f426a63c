"""The provider package's TrainingJob (`gcp-training-jobs:index:TrainingJob`): the engine's provider protocol
(pulumi.provider.experimental) over the one TrainingJob provider, `training_job.provider.TrainingJobProvider`, whose
check, diff, create, read, update and delete it calls: the same judge, price, guardrails, quota plan, crash safety
and words as the Python dynamic resource. What this adds is the protocol's part:

- the schema, generated from the declaration (job_model.schema);
- the configuration, the stack's `gcp-training-jobs:*` config (apiEndpoint, guardrails, ...), read once by
  `configure` (the engine configures the package's provider with its namespace's keys);
- the inputs a Python program's `TrainingJob` sets itself, set here from the URN: the resource's name and its
  identity (organization/project/stack/name; the organization is `gcp-training-jobs:organization`, else the file
  backend's "organization");
- the job's parts given on their own (`jobSpec`, `region`, `labels`, ...) folded into `job`;
- secrets where they stand (values.read / values.write) and a diff per field (`detailed_diff`);
- `read` of a job made outside Pulumi (`pulumi import TYPE NAME RESOURCE_NAME`): its project, backend and region
  from its resource name, and the inputs that declare it read back from the job.

The provider's methods block (HTTP, waits): each runs in a worker thread, so the engine's parallel steps proceed;
the provider object is written once, by `configure`, as the dynamic provider's is.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.dynamic import PROVIDER_KEY
from pulumi.provider.experimental import provider as rpc

from gcp_training_jobs.jobspec.core.names import NAMESPACE, ORGANIZATION_INPUT, STACK_CONFIG_INPUT, SYSTEM_LABELS
from gcp_training_jobs.jobspec.core.version import __version__
from gcp_training_jobs.resources import provider_log
from gcp_training_jobs.resources.job_model.declared import (
    BACKEND,
    GUARDRAILS,
    IDENTITY,
    INPUTS,
    JOB,
    NAME,
    PROJECT,
    Change,
)
from gcp_training_jobs.resources.job_model.identity import identity_of
from gcp_training_jobs.resources.job_model.inputs import Inputs
from gcp_training_jobs.resources.job_model.schema import TYPE_TOKEN, fold_job, schema
from gcp_training_jobs.resources.package import values
from gcp_training_jobs.resources.training_job.provider import TrainingJobProvider

T = TypeVar("T")
#: The organization of a resource's identity when the stack does not name one: the file backend's.
DEFAULT_ORGANIZATION = "organization"
_VERTEX_NAME = re.compile(r"projects/([^/]+)/locations/([^/]+)/customJobs/[^/]+")
_ML_NAME = re.compile(r"projects/([^/]+)/jobs/[^/]+")
#: The inputs a diff compares field by field (not the data a stack computes, nor the name and identity).
_COMPARED = tuple(i.wire for i in INPUTS if i.arg is not None and i.change is not Change.READ)


#: The stack keys the package's configuration is not: `jobs` is what the Python program builds its TrainingJobs from
#: (a stack file's `gcp-training-jobs:jobs`); a program using the package declares its jobs itself, so a stack file
#: that still lists them (a stack moved to the package by its program) neither configures the package nor names its
#: refusals by that stack key.
NOT_CONFIG = frozenset({"jobs"})


class Config:
    """The package's configuration as the engine hands it to `configure`, read as the dynamic provider reads its own
    (`get("gcp-training-jobs:KEY")`).

    A default provider is handed the stack's `gcp-training-jobs:*` config: a value sent as JSON text (an object) is
    parsed, and the keys of NOT_CONFIG are left out (the program declares its jobs). The explicit provider of a stack
    file's program (STACK_CONFIG_INPUT given: resources/package/resource.StackProvider) is handed the stack's whole
    config as the dynamic provider is: `get` answers with its text and `_props` is it, so the stack's jobs (and so
    its quota and reservation plan, training_job/plan.py) are the provider's as they are the dynamic provider's."""

    _project_name = NAMESPACE

    def __init__(self, request: rpc.ConfigureRequest) -> None:
        found: dict[str, Any] = {}
        for key, text in request.variables.items():  # "gcp-training-jobs:config:KEY" or "gcp-training-jobs:KEY"
            found[key.rsplit(":", 1)[-1]] = _json_or_text(text)
        for key, value in values.read(request.args).data.items():
            found[key] = _json_or_text(value) if isinstance(value, str) else value
        stack = found.pop(STACK_CONFIG_INPUT, None)
        self._props: dict[str, Any] = {str(k): v for k, v in stack.items()} if isinstance(stack, Mapping) else {}
        if self._props:
            found = {key.rpartition(":")[2]: _json_or_text(text) if isinstance(text, str) else text
                     for key, text in self._props.items() if key.rpartition(":")[0] == NAMESPACE} | \
                {key: value for key, value in found.items() if key == ORGANIZATION_INPUT}
        self.values = {key: value for key, value in found.items() if self._props or key not in NOT_CONFIG}

    def get(self, key: str) -> Any:
        namespace, _, bare = key.rpartition(":")
        if self._props:  # as the dynamic provider is handed it: the text of each key
            return self._props.get(key if namespace else f"{NAMESPACE}:{key}")
        return self.values.get(bare) if namespace in ("", NAMESPACE) else None

    def value(self, bare: str) -> Any:
        """The value of `gcp-training-jobs:BARE` (an object parsed), for the package's own reading."""
        return self.values.get(bare)


def _json_or_text(text: str) -> Any:
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


class TrainingJobPackage(rpc.Provider):
    """The package's provider: the protocol over TrainingJobProvider (one instance, configured once)."""

    def __init__(self, jobs: TrainingJobProvider | None = None) -> None:
        self.jobs = jobs or TrainingJobProvider()
        self.guardrails: Any = None
        self.organization = DEFAULT_ORGANIZATION

    async def get_schema(self, request: rpc.GetSchemaRequest) -> rpc.GetSchemaResponse:
        return rpc.GetSchemaResponse(json.dumps(schema()))

    async def configure(self, request: rpc.ConfigureRequest) -> rpc.ConfigureResponse:
        config = Config(request)
        self.jobs.configure(ConfigureRequest(config))  # type: ignore[arg-type]  # duck-typed: `.get(KEY)`
        self.guardrails = config.value("guardrails")
        self.organization = str(config.value(ORGANIZATION_INPUT) or DEFAULT_ORGANIZATION)
        return rpc.ConfigureResponse(accept_secrets=True, supports_preview=False)

    # -- check and diff --------------------------------------------------------------------------

    def _props(self, urn: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """A resource's props as TrainingJobProvider takes them: the job folded, its name and identity set from the
        URN, the stack's guardrails where the resource names none."""
        props = fold_job(given)
        name, project, stack = _urn_parts(urn)
        props[NAME.wire] = name
        props[IDENTITY.wire] = identity_of(self.organization, project, stack, name)
        props.setdefault(BACKEND.wire, BACKEND_DEFAULT)
        if props.get(GUARDRAILS.wire) is None and self.guardrails is not None:
            props[GUARDRAILS.wire] = self.guardrails
        return props

    async def check(self, request: rpc.CheckRequest) -> rpc.CheckResponse:
        news, olds = values.read(request.new_inputs), values.read(request.old_inputs)
        props = self._props(request.urn, news.data)
        result = await _for(request.urn, self.jobs.check, olds.data, props)
        failures = [rpc.CheckFailure(f.property, f.reason) for f in result.failures or []]
        return rpc.CheckResponse(inputs=values.write(result.inputs or props, _folded(news.secrets)),
                                 failures=failures)

    async def diff(self, request: rpc.DiffRequest) -> rpc.DiffResponse:
        olds, news = values.read(request.old_state), values.read(request.new_inputs)
        result = await _for(request.urn, self.jobs.diff, request.resource_id, olds.data, news.data)
        replaces = list(result.replaces or [])
        detailed: dict[str, rpc.PropertyDiff] = {}
        for key in (*_COMPARED, "state"):
            for path in values.changed_paths(olds.data.get(key), news.data.get(key), key) if key != "state" else []:
                kind = rpc.PropertyDiffKind.UPDATE_REPLACE if key in replaces else rpc.PropertyDiffKind.UPDATE
                detailed[path] = rpc.PropertyDiff(kind, input_diff=True)
        if "state" in replaces:  # a FAILED job made again: not an input's change
            detailed["state"] = rpc.PropertyDiff(rpc.PropertyDiffKind.UPDATE_REPLACE, input_diff=False)
        if PROVIDER_KEY in olds.data:  # a state the dynamic resource wrote (moved here by its alias): its pickled
            # provider leaves the state by an update in place, which reads the job and writes the package's outputs
            detailed[PROVIDER_KEY] = rpc.PropertyDiff(rpc.PropertyDiffKind.DELETE, input_diff=False)
        return rpc.DiffResponse(changes=bool(result.changes) or PROVIDER_KEY in detailed, replaces=replaces,
                                delete_before_replace=bool(result.delete_before_replace),
                                diffs=sorted({p.split(".", 1)[0].split("[", 1)[0] for p in detailed}),
                                detailed_diff=detailed)

    # -- create, read, update, delete ------------------------------------------------------------

    async def create(self, request: rpc.CreateRequest) -> rpc.CreateResponse:
        given = values.read(request.properties)
        result = await _for(request.urn, self.jobs.create, given.data)
        return rpc.CreateResponse(result.id, values.write(result.outs or {}, given.secrets))

    async def read(self, request: rpc.ReadRequest) -> rpc.ReadResponse:
        state = values.read(request.properties)
        if not state.data:  # `pulumi import`: a job made outside Pulumi, known by its resource name only
            return await _for(request.urn, self._import, request.urn, request.resource_id)
        result = await _for(request.urn, self.jobs.read, request.resource_id, state.data)
        if not result.id:
            return rpc.ReadResponse()
        given = values.read(request.inputs)
        return rpc.ReadResponse(result.id, values.write(result.outs or {}, state.secrets),
                                values.write(given.data, given.secrets))

    def _import(self, urn: str, resource_name: str) -> rpc.ReadResponse:
        """A job made outside Pulumi read into the state as a program declares it: its project, backend and job
        (the spec and the labels the API holds, region from its name) as inputs, the provider's outputs beside."""
        props = _imported(urn, resource_name, self)
        body = self.jobs._reach(Inputs.of(props)).of_name(resource_name).get(resource_name)  # noqa: SLF001
        if body is None:
            return rpc.ReadResponse()
        props[JOB.wire] = _declared_job(body, Inputs.of(props).region)
        result = self.jobs.read(resource_name, props)
        if not result.id:
            return rpc.ReadResponse()
        given = {key: props[key] for key in _COMPARED if props.get(key) is not None}
        return rpc.ReadResponse(result.id, values.write(result.outs or {}), values.write(given))

    async def update(self, request: rpc.UpdateRequest) -> rpc.UpdateResponse:
        olds, news = values.read(request.olds), values.read(request.news)
        result = await _for(request.urn, self.jobs.update, request.resource_id, olds.data, news.data)
        return rpc.UpdateResponse(values.write(result.outs or {}, news.secrets))

    async def delete(self, request: rpc.DeleteRequest) -> None:
        await _for(request.urn, self.jobs.delete, request.resource_id, values.read(request.properties).data)


BACKEND_DEFAULT = "vertex"


async def _for(urn: str, call: Callable[..., T], *args: Any) -> T:
    """`call(*args)` in a worker thread (the provider blocks: HTTP, waits), its lines said under the resource `urn`
    (provider_log.RESOURCE, which the thread is handed with the task's context)."""
    token = provider_log.RESOURCE.set(urn)
    try:
        return await asyncio.to_thread(call, *args)
    finally:
        provider_log.RESOURCE.reset(token)


def _folded(secrets: frozenset[values.Path]) -> frozenset[values.Path]:
    """The secret paths of the job's parts given on their own, at their place in the folded `job`."""
    return frozenset((JOB.wire, *path) if path and path[0] in ("jobSpec", "trainingInput", "tuningJob", "region",
                                                                "labels") else path for path in secrets)


def _urn_parts(urn: str) -> tuple[str, str, str]:
    """A URN's resource name, project and stack (urn:pulumi:STACK::PROJECT::TYPE::NAME)."""
    parts = urn.split("::")
    stack = parts[0].rsplit(":", 1)[-1] if parts else ""
    return (parts[-1] if len(parts) >= 4 else urn), (parts[1] if len(parts) >= 4 else ""), stack


def _imported(urn: str, resource_name: str, package: TrainingJobPackage) -> dict[str, Any]:
    """The props a job made outside Pulumi is read with (`pulumi import`): its project, backend and region from its
    resource name; refused with the names allowed when it is none."""
    job: dict[str, Any]
    if found := _VERTEX_NAME.fullmatch(resource_name):
        project, backend, job = found.group(1), "vertex", {"region": found.group(2), "jobSpec": {}}
    elif found := _ML_NAME.fullmatch(resource_name):
        project, backend, job = found.group(1), "ai-platform", {"trainingInput": {}}
    else:
        raise ValueError(f"{TYPE_TOKEN} {_urn_parts(urn)[0]}: cannot import {resource_name!r}; allowed: a job's "
                         "resource name, projects/P/locations/R/customJobs/ID on Vertex AI, projects/P/jobs/ID on "
                         "AI Platform Training (a tuning job is not imported yet)")
    return package._props(urn, {PROJECT.wire: project, BACKEND.wire: backend, JOB.wire: job})


def _declared_job(body: Mapping[str, Any], region: str) -> dict[str, Any]:
    """A job as the API holds it, written as a program declares it: its vocabulary's part (jobSpec, or ml v1's
    trainingInput), the region beside a jobSpec, and the job's own labels (not those this project puts on a job)."""
    labels = {k: v for k, v in (body.get("labels") or {}).items() if k not in SYSTEM_LABELS}
    job: dict[str, Any] = ({"trainingInput": body["trainingInput"]} if "trainingInput" in body
                           else {"jobSpec": body.get("jobSpec") or {}, "region": region})
    return {**job, **({"labels": labels} if labels else {})}


__all__ = ["TYPE_TOKEN", "Config", "TrainingJobPackage", "__version__"]
