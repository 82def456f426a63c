"""TrainingJob's inputs and outputs, declared once: each input's property (the wire name the engine gets and the state
holds), its TrainingJobArgs field, its type, its bounds, what it is, what a change of it does, and whether a stack's
job sets it under its own key (`jobs.NAME.KEY`); each output's property, type and meaning.

Every reader derives from this table (as pulumi-gcp declares each wire name once, `@pulumi.getter(name=...)`):
TrainingJobArgs and the props `TrainingJob` hands the engine (training_job/__init__.py), the provider's read of
the props (`inputs.Inputs.of`), the one input validation (`inputs.input_problems`, with the rules below, which the
stack's `jobs.NAME.*` settings take too: settings/model.py), what a change does (`runs.REPLACING` / `runs.IN_PLACE`),
the flags (`FLAGS`), the stack keys a refusal names (`provider_base.JOB_KEYS`) and the outputs (`OUTPUT_KEYS`, the
annotations of `TrainingJob`). A property's name is spelled here and nowhere else in `resources/`.

The declaration is `TrainingJobArgs` itself (each field's metadata: the input it gives, as pulumi-gcp's args carry
their getters) and `TrainingJobOutputs`, so a program's type checker reads the same one. Importing this loads no
Pulumi: `pulumi.Input` and `pulumi.Output` are named in annotations only.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from gcp_training_jobs.jobspec.core.names import BACKENDS, DEFAULT_BACKEND, MAX_RETRIES

if TYPE_CHECKING:  # the annotations only: importing this loads no Pulumi
    from pulumi import Input as Input_
    from pulumi import Output as Output_

# --- The rules of the inputs a stack's job sets too (its settings take these types: settings/model.py) -----------

#: The most characters a `rerun` token has (a stack key's value, and a program's argument, alike).
RERUN_MAX = 63
#: The most alternatives a job's `fallbacks` lists.
FALLBACKS_MAX = 10
_SECONDS = "allowed: a finite number of seconds > 0, e.g. 3600"


def _finite_seconds(value: Any) -> Any:
    """A finite number of seconds: `true` is not 1 s (as pydantic's lax mode would take it), nor is 1e400
    infinity."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number of seconds; {_SECONDS}")
    try:
        finite = math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return value  # not a number at all: pydantic says so
    if not finite:
        raise ValueError(f"not a finite number; {_SECONDS}")
    return value


def _above_zero(value: float) -> float:
    if value <= 0:
        raise ValueError(f"too small; {_SECONDS}")
    return value


#: How long `pulumi up` waits for a job, at most.
Seconds = Annotated[float, BeforeValidator(_finite_seconds), AfterValidator(_above_zero)]
#: How many times a job that failed for Google's reasons is made again.
Retries = Annotated[int, Field(ge=0, le=MAX_RETRIES)]
#: A re-run token: any text up to RERUN_MAX characters.
RerunToken = Annotated[str, Field(max_length=RERUN_MAX)]
#: How many alternatives a job's `fallbacks` may list (the settings' list of their model takes it too).
FALLBACKS_BOUND = Field(max_length=FALLBACKS_MAX)
#: The alternatives, as the provider takes them (each judged by the check, like the job).
Alternatives = Annotated[list[Any], FALLBACKS_BOUND]


# --- The declaration ----------------------------------------------------------------------------------------------


class Change(Enum):
    """What a change of an input does to the job (the provider's diff, `runs.changes_of`)."""

    REPLACES = "replaces"
    """A new job (and the old one cancelled)."""
    IN_PLACE = "in place"
    """Recorded by an update in place: no API call but a read."""
    SPEC = "spec"
    """Compared by what it runs (`inputs.spec_of`) and by its labels: the `job` input."""
    READ = "read"
    """Read by the provider, never compared (a renamed stack keeps its jobs; the stack's quota needs change with its
    other jobs)."""


class Kind(Enum):
    """What a value of an input is: its type check (`inputs.input_problems`) and its read (`inputs.Inputs.of`)."""

    TEXT = "text"
    BACKEND = "backend"
    JOB = "job"
    FLAG = "flag"
    SECONDS = "seconds"
    COUNT = "count"
    LIST = "list"
    MAPPING = "mapping"
    DATA = "data"
    """Data the stack builds (never judged as an input: read leniently)."""


@dataclass(frozen=True)
class Input:
    """One input of a TrainingJob."""

    wire: str
    """The property: its name in the props the engine gets, in the state, and in a refusal."""
    kind: Kind
    change: Change
    description: str
    allowed: str = ""
    """What a value may be, in the words a refusal of its type says."""
    rule: Any = None
    """The pydantic type holding its bounds (and the words that refuse them), shared with the stack's settings."""
    stack_key: bool = False
    """A stack's job sets it under its own key, `jobs.NAME.KEY` (a refusal of it names that key)."""
    attribute: str = ""
    """Its field of `inputs.Inputs` (the provider's read), if it has one of its own."""
    arg: str | None = None
    """Its TrainingJobArgs field (None: `TrainingJob` sets it itself: the resource's name, its identity)."""
    required: bool = False


def declare(wire: str, kind: Kind, change: Change, description: str, **more: Any) -> dict[str, Input]:
    """A TrainingJobArgs field's declaration (its `metadata`): the input it gives."""
    return {"input": Input(wire, kind, change, description, **more)}


@dataclass
class TrainingJobArgs:
    """One training job: where, on which API, the job itself, and the stack's rules on it.

    Each field is checked where it is given (`TrainingJob(...)` raises InvalidArgs naming the field: `retries="three"`
    is refused); a value that is an Output, not known until the engine resolves it, is checked by the provider's
    `check` instead, against the same rules (gcp_training_jobs.resources.job_model.inputs). Each field declares the
    input it gives (its property, what it may be, what a change of it does): the one declaration of the inputs."""

    project: Input_[str] = field(metadata=declare(
        "project", Kind.TEXT, Change.REPLACES, "The Google Cloud project the job runs in.",
        allowed="the Google Cloud project id", attribute="project"))
    job: Input_[dict[str, Any]] = field(metadata=declare(
        "job", Kind.JOB, Change.SPEC,
        "The job, in either vocabulary: AI Platform Training's (a gcloud config.yaml Job: `{\"trainingInput\": "
        "{...}, \"labels\": ...}`), or Vertex AI's (`{\"jobSpec\": CustomJobSpec, \"region\": R, \"labels\": "
        "...}`, vertex only); leaves may be Outputs (a package URI, a job dir).",
        allowed="a mapping, {'trainingInput': ...} or {'jobSpec': ..., 'region': ...}", stack_key=True,
        attribute="job"))
    backend: Input_[str] = field(default=DEFAULT_BACKEND, metadata=declare(
        "backend", Kind.BACKEND, Change.REPLACES,
        "vertex (Vertex AI custom jobs) or ai-platform (AI Platform Training v1).", allowed=", ".join(BACKENDS),
        attribute="backend"))
    wait_for_completion: Input_[bool] = field(default=False, metadata=declare(
        "waitForCompletion", Kind.FLAG, Change.IN_PLACE, "Whether create (and replace) waits until the job ends.",
        allowed="true, false", stack_key=True, attribute="wait"))
    wait_timeout_seconds: Input_[float] | None = field(default=None, metadata=declare(
        "waitTimeoutSeconds", Kind.SECONDS, Change.IN_PLACE, "How long to wait at most (default: 24 hours).",
        allowed=_SECONDS.removeprefix("allowed: "), rule=Seconds, stack_key=True, attribute="wait_timeout"))
    guardrails: Input_[dict[str, Any]] | None = field(default=None, metadata=declare(
        "guardrails", Kind.MAPPING, Change.IN_PLACE,
        "The stack's guardrails (`gcp-training-jobs:guardrails`, camelCase keys), checked on this job by the "
        "provider's check (the per-job ones and the fixed job rules); `protectJobs` protects it when active.",
        allowed="a mapping of the stack's guardrails"))
    protect: Input_[bool] | None = field(default=None, metadata=declare(
        "protect", Kind.FLAG, Change.IN_PLACE,
        "Refuse a change that replaces or deletes the job while it is QUEUED, PREPARING or RUNNING (None: the "
        "guardrails' protectJobs).", allowed="true, false", stack_key=True, attribute="protect"))
    fallbacks: Input_[list[dict[str, Any]]] | None = field(default=None, metadata=declare(
        "fallbacks", Kind.LIST, Change.IN_PLACE,
        "Where else the job may run, in order (each: `region`, `machineSpec` {machineType, acceleratorType, "
        "acceleratorCount}, `scheduling.strategy`), when a placement's quota, read at create, cannot hold the job, "
        "a create is refused for quota or capacity, or the job fails for capacity before it ran; adding or editing "
        "them never replaces a running job.",
        allowed="a list of alternatives (region, machineSpec, scheduling)", rule=Alternatives, stack_key=True,
        attribute="fallbacks"))
    retries: Input_[int] | None = field(default=None, metadata=declare(
        "retries", Kind.COUNT, Change.IN_PLACE,
        "How many times a job that failed for Google's reasons (capacity, preemption, internal faults) is made "
        "again (None: 2); a failure of the user's code never is.",
        allowed=f"a whole number from 0 to {MAX_RETRIES}", rule=Retries, stack_key=True, attribute="retries"))
    rerun: Input_[str] | None = field(default=None, metadata=declare(
        "rerun", Kind.TEXT, Change.REPLACES,
        f"Any text (at most {RERUN_MAX} characters): changing it replaces the job with a fresh run of the same spec.",
        allowed="any text (change it to run the job again)", rule=RerunToken, stack_key=True, attribute="rerun"))
    delete_record_on_delete: Input_[bool] | None = field(default=None, metadata=declare(
        "deleteRecordOnDelete", Kind.FLAG, Change.IN_PLACE,
        "Whether deleting or replacing the resource also removes its finished job's record from Vertex AI (None, "
        "False: every record stays, the job's history; an active job is cancelled either way).",
        allowed="true, false", stack_key=True, attribute="delete_record"))
    persistent_resource_declared: Input_[bool] | None = field(default=None, metadata=declare(
        "persistentResourceDeclared", Kind.FLAG, Change.READ,
        "Whether the persistent resource the job runs on is the stack's own (stack.py; None: an existing one, "
        "which the check asks Vertex about: it exists and is RUNNING).", allowed="true, false",
        attribute="resource_declared"))
    budget: Input_[dict[str, Any]] | None = field(default=None, metadata=declare(
        "budget", Kind.DATA, Change.READ,
        "The stack's monthly budget and its worst case ({\"monthlyUsd\", \"stackWorstCase\"}, resources.budget), held "
        "by the check as guardrail `budget`.", attribute="budget"))
    cheapest_first: Input_[bool] | None = field(default=None, metadata=declare(
        "cheapestFirst", Kind.FLAG, Change.IN_PLACE,
        "`jobs.NAME.placement: cheapest`: `fallbacks` are the job's ranked candidates, tried cheapest first in place "
        "of the job as written (which stays its identity); changing it never replaces a running job.",
        allowed="true, false", attribute="cheapest"))


#: The inputs TrainingJob sets itself (never an argument).
_SET_BY_THE_RESOURCE = (
    Input("name", Kind.TEXT, Change.IN_PLACE, "The resource's name (set by TrainingJob).", attribute="name"),
    Input("identity", Kind.DATA, Change.READ,
          "Who the job belongs to (organization/project/stack/name, set by TrainingJob): it labels the job at "
          "create, so that a re-run finds it.", attribute="identity"),
)


def inputs_of(args: type) -> tuple[Input, ...]:
    """Every input of a TrainingJob whose args class is `args`: the resource's name, each field's, its identity."""
    return (_SET_BY_THE_RESOURCE[0],
            *(replace(f.metadata["input"], arg=f.name, required=f.default is MISSING) for f in fields(args)),
            _SET_BY_THE_RESOURCE[1])


#: Every input, in the order the resource hands them to the engine.
INPUTS = inputs_of(TrainingJobArgs)

TrainingJobArgs.__doc__ = (TrainingJobArgs.__doc__ or "") + "\n\n    Fields:\n\n" + "\n".join(
    f"    - `{i.arg}` ({i.wire}): {i.description}" for i in INPUTS if i.arg is not None)

INPUT: dict[str, Input] = {declared.wire: declared for declared in INPUTS}
"""Each input by its property."""

#: The inputs whose change makes a new job (besides the job's spec, and its labels where they cannot be patched).
REPLACING = tuple(i.wire for i in INPUTS if i.change is Change.REPLACES)
#: The inputs changed in place (recorded by update; no API call but a read).
IN_PLACE = tuple(i.wire for i in INPUTS if i.change is Change.IN_PLACE)
#: The flags (true / false) among the inputs.
FLAGS = tuple(i.wire for i in INPUTS if i.kind is Kind.FLAG)
#: The inputs a stack's job sets under its own key (jobs.NAME.KEY).
JOB_KEYS = tuple(i.wire for i in INPUTS if i.stack_key)

# The inputs a reader names on its own (each spelled once, here).
NAME, PROJECT, BACKEND, JOB = INPUT["name"], INPUT["project"], INPUT["backend"], INPUT["job"]
WAIT, WAIT_TIMEOUT, GUARDRAILS, PROTECT = (INPUT["waitForCompletion"], INPUT["waitTimeoutSeconds"],
                                           INPUT["guardrails"], INPUT["protect"])
FALLBACKS, RETRIES, RERUN = INPUT["fallbacks"], INPUT["retries"], INPUT["rerun"]
DELETE_RECORD = INPUT["deleteRecordOnDelete"]
BUDGET, CHEAPEST_FIRST = INPUT["budget"], INPUT["cheapestFirst"]
RESOURCE_DECLARED, IDENTITY = INPUT["persistentResourceDeclared"], INPUT["identity"]


# --- The outputs --------------------------------------------------------------------------------------------------


class TrainingJobOutputs:
    """The outputs of a TrainingJob, read back from the API: attributes named as the properties (camelCase, as for
    every dynamic resource), declared here once; `TrainingJob` takes them (its annotations, which the SDK reads to
    type what the engine answers: 8.0 for an int output is 8)."""

    jobId: Output_[str]
    """The job's id (name + random suffix; a new one whenever the job is replaced)."""
    resourceName: Output_[str]
    """The full API resource name (projects/P/jobs/ID, or projects/P/locations/R/customJobs/N)."""
    state: Output_[str]
    """QUEUED, PREPARING, RUNNING, SUCCEEDED, FAILED, CANCELLING or CANCELLED (both backends)."""
    backendState: Output_[str]
    """The state as the job's API spells it."""
    createTime: Output_[str]
    """When the job was made (as the API answers)."""
    startTime: Output_[str]
    """When the job started running, once it has."""
    endTime: Output_[str]
    """When the job ended, once it has."""
    errorMessage: Output_[str]
    """Why a FAILED job failed, as the API says it."""
    trainingOutput: Output_[dict]
    """What the API reports of the training (AI Platform Training's trainingOutput)."""
    consoleUrl: Output_[str]
    """The job's page in the Google Cloud console."""
    trialCount: Output_[int]
    """Tuning jobs (Vertex AI HyperparameterTuningJob): the number of trials so far; None for training jobs."""
    bestTrial: Output_[dict]
    """Tuning jobs: the best trial so far (id, final metrics, parameters); None for training jobs."""
    costUsd: Output_[float]
    """What the job has cost so far in USD (the time it has run times the rate it runs at: Spot for SPOT, from the
    price table; gcp_training_jobs.jobspec.review.run_cost), as of its last read: `pulumi refresh` updates it. None
    when a part of it has no known price."""
    placement: Output_[dict]
    """Where the deploy made the job: {index (0: the job as written, i: fallbacks[i-1]; under `placement: cheapest`
    the candidate fallbacks[i]), region, strategy, reservation, machine} (resources.fallbacks.placement_of)."""
    retryCount: Output_[int]
    """How many times the job was made again after failing for Google's reasons (0: the first run of its spec)."""
    waitFailure: Output_[str | None]
    """The error of the FAILED job this `pulumi up` waited for (waitForCompletion), else None. The update fails on it
    (exit non-zero) after the job is recorded in the state; the next `up` clears it and does not run the job again
    (a failure of the user's code never is; Google's keep their retries)."""


#: The outputs, read back from the API.
OUTPUT_KEYS = tuple(TrainingJobOutputs.__annotations__)


def _output(name: str) -> str:
    """An output a reader names on its own, by its property: one of TrainingJobOutputs' (else the import fails)."""
    if name not in OUTPUT_KEYS:
        raise AssertionError(f"{name} is not an output of TrainingJobOutputs")
    return name


# The outputs a reader names on its own (each spelled once, here).
JOB_ID, RESOURCE_NAME, STATE, BACKEND_STATE = (_output("jobId"), _output("resourceName"), _output("state"),
                                               _output("backendState"))
CONSOLE_URL, COST_USD, PLACEMENT, RETRY_COUNT = (_output("consoleUrl"), _output("costUsd"), _output("placement"),
                                                 _output("retryCount"))
ERROR_MESSAGE = _output("errorMessage")
#: The output that turns a waiting `pulumi up` red: the error of the FAILED job it waited for (set by create, cleared
#: by the next update: TrainingJob raises on it once its outputs resolve, after the job is recorded in the state).
WAIT_FAILURE = _output("waitFailure")
