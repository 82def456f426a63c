"""A TrainingJob's inputs, read once: the `job` input as data in either vocabulary (what stack.py sends, the
provider reads and the policy pack judges), what every other input may be, and `Inputs`, the provider's read of
them all.

Two forms of `job`, one vocabulary each:
- AI Platform Training's ml v1 Job: `{"trainingInput": {...}, "labels": {...}}` (the region is trainingInput.region; the
  job id is drawn at create);
- a Vertex AI CustomJobSpec: `{"jobSpec": {...}, "region": "us-central1", "labels": {...}}`: the spec as
  `gcloud ai custom-jobs create --config` reads it (int64 fields as decimal strings, as the API writes them),
  plus what gcloud takes from its flags: the region (never part of the spec) and the labels. Vertex only.
- a Vertex AI tuning config: `{"tuningJob": {...}, "region": ..., "labels": {...}}`, as `gcloud ai hp-tuning-jobs
  create --config` reads it (studySpec, trialJobSpec, the trial counts), with the region and the labels in force
  beside it (they replace the config's own, as gcloud's --labels do). Vertex only.

What identifies a job's work (`spec_of`, the `pulumi-spec` label and the diff) is its parsed form, so the
noise Pulumi adds (8 sent back as 8.0, int64 as text or as a number, dict order) never reads as a change.

Each input is judged in one place for both places it is given: `TrainingJob(...)` in the program (each value known
there, an Output left to the provider) and the provider's `check` (the engine's values; UNKNOWN at preview). Only
an unknown value passes unchecked: any other text where a number or a flag belongs (`retries="three"`) is a
problem naming the input and what it allows.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from gcp_training_jobs.jobspec import load
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import (
    BACKENDS,
    DEFAULT_RETRIES,
    JOB_ID_SUFFIX_HEX,
    JOB_SPEC,
    MAX_RETRIES,
    TUNING_JOB,
    job_id_of,
)
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.io.vocabulary import written_region
from gcp_training_jobs.jobspec.load import Judged
from gcp_training_jobs.jobspec.render.bodies import Renderable
from gcp_training_jobs.jobspec.review.guardrails import Guardrails
from gcp_training_jobs.jobspec.vocab.custom_job import spec_body
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import job_body
from gcp_training_jobs.resources.job_model.declared import (
    BACKEND,
    BUDGET,
    CHEAPEST_FIRST,
    DELETE_RECORD,
    FALLBACKS,
    GUARDRAILS,
    IDENTITY,
    INPUTS,
    JOB,
    NAME,
    PROJECT,
    PROTECT,
    RERUN,
    RESOURCE_DECLARED,
    RETRIES,
    WAIT,
    WAIT_TIMEOUT,
    Input,
    Kind,
)
from gcp_training_jobs.resources.job_model.protection import guardrails_of, protect_of


def region_of(job: Any) -> str:
    """Where a `job` input (or a fallback's job data) asks to run, as written: its trainingInput.region, or the
    region beside its jobSpec or tuningJob ("" if not known). This is a different fact from a judged job's region
    (JobFacts.region): it is read before any judging, where nothing is judged (a placement's target for the
    lookup before a create, a preview's job whose region is still unknown); the settings write the job's judged
    region into this field (stack.py), so the two agree for every job a stack makes."""
    return written_region(job)


def parse_wire(job: Any) -> Renderable:
    """The job, parsed but not judged (a job that was judged when it entered: the provider's create)."""
    return load.model_of(job)


def judge_wire(job: Any, *, backend: str | None = None, today: date | None = None, job_id: str | None = None,
               rules: bool = True) -> Judged:
    """The `job` input read once by the one entry point (load.judge, enclosed): a trainingInput judged by the
    limits of `backend` (AI Platform Training's historic ones, or Vertex AI's of today on its translation), a
    CustomJobSpec by Vertex AI's in its region; every problem at its path in the `job` input. `rules=False`
    parses, translates and renders only (a job judged by `check` before its create). A job that does not parse
    is a SpecError."""
    return load.judge(job, enclosed=True, backend=backend, today=today, job_id=job_id, rules=rules)


def wire_of(job: Renderable) -> dict[str, Any]:
    """A validated job as the `job` input carries it (JSON API names, int64 as decimal strings)."""
    if isinstance(job, TuningJob):
        config = job.config.model_dump(mode="json", by_alias=True, exclude_none=True)
        config.pop("labels", None)  # the labels in force stand beside it
        tuning: dict[str, Any] = {TUNING_JOB: config, "region": job.region}
        if job.labels:
            tuning["labels"] = dict(job.labels)
        return tuning
    if isinstance(job, VertexJob):
        body: dict[str, Any] = {JOB_SPEC: spec_body(job.spec), "region": job.region}
        if job.labels:
            body["labels"] = dict(job.labels)
        return body
    body = job_body(job)
    body.pop("jobId", None)
    return body


#: Placeholders for values unknown at preview (a created bucket's name, an uploaded package's URI), so the rest
#: of a job is still judged: by the provider's check and by the policy pack alike.
PREVIEW_URI = "gs://unknown-at-preview/unknown"
URI_FIELDS = ("packageUris", "jobDir", "outputUriPrefix")


def known_only(value: Any, is_unknown: Callable[[Any], bool]) -> Any:
    """The job with values unknown at preview (`is_unknown`: the engine's sentinel, or the policy SDK's) left
    out, or replaced by PREVIEW_URI where a URI goes."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if is_unknown(item):
                if key in URI_FIELDS:
                    out[key] = [PREVIEW_URI] if key == "packageUris" else PREVIEW_URI
                continue
            out[key] = known_only(item, is_unknown)
        return out
    if isinstance(value, list):
        return [PREVIEW_URI if is_unknown(item) else known_only(item, is_unknown) for item in value]
    return value


def new_job_id(name: str, suffix: str | None = None) -> str:
    """name + random suffix: ids can never be reused in a project, even after the job ends."""
    return f"{job_id_of(name.lower())}_{suffix or secrets.token_hex(JOB_ID_SUFFIX_HEX // 2)}"


def preview_job_id(name: str) -> str:
    """The id a job is judged and shown under before its own is drawn at create (a suffix of zeros)."""
    return new_job_id(name or "job", "0" * JOB_ID_SUFFIX_HEX)


def canonical(value: Any) -> Any:
    """Normalise for comparison: integral floats to ints (Pulumi sends 8 as 8.0), None left out, keys sorted."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def spec_of(job: dict[str, Any], parsed: Renderable | None = None) -> Any:
    """What identifies a job's work: everything but its labels, in canonical form (parsed, so an int64 written
    as 9, "9" or 9.0 is the same; the raw job, canonicalised, where it does not parse). `parsed`: the job
    already parsed, when the caller has it."""
    try:
        body = wire_of(parsed if parsed is not None else parse_wire(job))
    except SpecError:
        body = dict(job)
    body.pop("labels", None)
    body.pop("jobId", None)
    return json.loads(json.dumps(canonical(body), sort_keys=True))



# --- The other inputs: their declaration is declared.py; read and judged here from it -------------------------


DEFAULT_WAIT_TIMEOUT = 24 * 3600.0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def retries_of(value: Any) -> int:
    """The `retries` input: a whole number from 0 to MAX_RETRIES (Pulumi sends 2 as 2.0); unset: DEFAULT_RETRIES."""
    if not _number(value) or not math.isfinite(value):
        return DEFAULT_RETRIES
    return int(value) if value == int(value) and 0 <= value <= MAX_RETRIES else DEFAULT_RETRIES


def rerun_of(value: Any) -> str | None:
    """The re-run token: any text; unset (or empty): None."""
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value) else None


def wait_timeout_of(value: Any) -> float:
    """How long a waiting create waits: the input when it is a number of seconds, else DEFAULT_WAIT_TIMEOUT."""
    return float(value) if seconds_problem(value) is None and value else DEFAULT_WAIT_TIMEOUT


#: The engine's unknown value (a preview's Output not resolved yet), as the Pulumi SDK spells it
#: (`pulumi.runtime.rpc.UNKNOWN`; tests/test_training_job.py holds the two equal). Written here so that reading the
#: inputs loads no Pulumi: the command line and the policy pack import this module.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def unknown(value: Any) -> bool:
    """Whether a value is the engine's unknown (a preview's Output not resolved yet)."""
    return isinstance(value, str) and value == UNKNOWN


def seconds_problem(value: Any) -> str | None:
    """Why a wait timeout is not a number of seconds (None: it is, or it is not set)."""
    return _problem(WAIT_TIMEOUT, value)


#: Whether a value is of an input's kind (the type check, before its bounds: `Input.rule`).
_OF_KIND: dict[Kind, Callable[[Any], bool]] = {
    Kind.TEXT: lambda value: isinstance(value, str),
    Kind.BACKEND: lambda value: value in BACKENDS,
    Kind.JOB: lambda value: isinstance(value, Mapping),
    Kind.FLAG: lambda value: isinstance(value, bool),
    Kind.SECONDS: _number,
    Kind.COUNT: lambda value: _number(value) and math.isfinite(value) and value == int(value),
    Kind.LIST: lambda value: isinstance(value, list),
    Kind.MAPPING: lambda value: isinstance(value, Mapping),
    Kind.DATA: lambda value: True,
}


def rules_of(declared_inputs: tuple[Input, ...]) -> type[BaseModel]:
    """The bounds of the inputs that have them, as one model of their properties: the same pydantic types, in the
    same words (core.problems.from_validation_error), as the stack's `jobs.NAME.*` settings (its validators built
    at first use)."""
    return create_model("TrainingJobInputs", __config__=ConfigDict(defer_build=True),  # type: ignore[call-overload]
                        **{declared.attribute: (declared.rule | None, Field(default=None, alias=declared.wire))
                           for declared in declared_inputs if declared.rule is not None})


#: The declared inputs' bounds (rules_of), made once: the model holds no state a call changes.
RULES = rules_of(INPUTS)


def _problem(declared: Input, value: Any) -> str | None:
    """Why a known value of an input is not allowed (None: it is, or it is unset / unknown): its kind first, in the
    input's own words, then its bounds, in the words the stack's settings say them."""
    if value is None or unknown(value):  # unset, or the engine's unknown at preview (other text is refused)
        return None
    if not _OF_KIND[declared.kind](value):
        if declared.kind is Kind.JOB:
            return f"{type(value).__name__}; allowed: {declared.allowed}"
        if declared.kind is Kind.SECONDS:
            return f"{value!r} is not a number of seconds; allowed: {declared.allowed}"
        return f"{value!r}; allowed: {declared.allowed}"
    if declared.rule is not None:
        try:
            RULES.model_validate({declared.wire: value})
        except ValidationError as error:
            return from_validation_error(error, RULES)[0].message
    return None


def input_problems(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(input, what is wrong and what is allowed) for each input of `props` (the engine's camelCase names) that is
    known and not allowed; unset and unknown values pass. The one judge of the inputs (declared.INPUTS), for both
    places they are given: `TrainingJob(...)` and the provider's `check`."""
    return [(declared.wire, problem) for declared in INPUTS
            if (problem := _problem(declared, props.get(declared.wire))) is not None]


#: What an input that is not in the props reads as, where that differs from an input set to None.
_ABSENT = ""

#: How each input is read into its field of `Inputs` (declared.Input.attribute); a value of the wrong kind reads as
#: unset: input_problems says what is wrong with it.
_READ: dict[str, Callable[[Any], Any]] = {declared.attribute: read for declared, read in (
    (NAME, str),
    (PROJECT, str),
    (BACKEND, str),
    (JOB, lambda value: dict(value) if isinstance(value, dict) else {}),
    (IDENTITY, lambda value: str(value or "")),
    (WAIT, lambda value: value is True),
    (WAIT_TIMEOUT, wait_timeout_of),
    (RETRIES, retries_of),
    (RERUN, rerun_of),
    (PROTECT, protect_of),
    (FALLBACKS, lambda value: tuple(value) if isinstance(value, list) else ()),
    (BUDGET, lambda value: dict(value) if isinstance(value, Mapping) else None),
    (DELETE_RECORD, lambda value: value is True),
    (RESOURCE_DECLARED, lambda value: value is True),
    (CHEAPEST_FIRST, lambda value: value is True),
)}


@dataclass(frozen=True)
class Inputs:
    """The provider's read of a resource's inputs (and, from the state, its last outputs: `props`), once per call."""

    name: str
    project: str
    backend: str
    job: dict[str, Any]
    job_id: str
    identity: str
    wait: bool
    wait_timeout: float
    retries: int
    rerun: str | None
    props: dict[str, Any] = field(default_factory=dict)
    guardrails: Guardrails = field(default_factory=Guardrails)
    """The stack's guardrails (none: none); what is wrong with the input is in `guardrail_problems`."""
    guardrail_problems: tuple[Problem, ...] = ()
    protect: bool | None = None
    """`protect` as given (None: the guardrails' protectJobs decides)."""
    fallbacks: tuple[Any, ...] = ()
    """The alternatives as given (each judged by the check; a value unknown at preview stays as it is)."""
    budget: dict[str, Any] | None = None
    """The stack's monthly budget and worst case (resources.budget.budget_input), or None."""
    delete_record: bool = False
    """A finished job's record is removed with the resource."""
    resource_declared: bool = False
    """The persistent resource the job names is the stack's own (made in the same `up`,
    checked offline), not an existing one the check asks Vertex about."""
    job_unknown: bool = False
    """The whole `job` input is unknown (a preview's Output): it is judged at `pulumi up`."""
    cheapest: bool = False
    """`cheapestFirst` (`jobs.NAME.placement: cheapest`): the fallbacks are the placements, cheapest first
    (runs.placements)."""

    @classmethod
    def of(cls, props: Mapping[str, Any]) -> Inputs:
        """The inputs read, each by its declaration's kind (declared.INPUTS); a value of the wrong kind reads as
        unset (input_problems says what is wrong with it)."""
        read = {declared.attribute: _READ[declared.attribute](props.get(declared.wire, _ABSENT))
                for declared in INPUTS if declared.attribute}
        rails, rail_problems = guardrails_of(props.get(GUARDRAILS.wire))
        return cls(
            **read,
            job_id=str(props.get("jobId") or ""),
            props=dict(props),
            guardrails=rails,
            guardrail_problems=tuple(rail_problems),
            job_unknown=unknown(props.get(JOB.wire)),
        )

    @property
    def region(self) -> str:
        return region_of(self.job)

    def parsed(self) -> Renderable:
        return parse_wire(self.job)
