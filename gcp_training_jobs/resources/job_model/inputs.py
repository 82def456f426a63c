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
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gcp_training_jobs.jobspec import load
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import (
    BACKENDS,
    DEFAULT_RETRIES,
    JOB_ID_SUFFIX_HEX,
    JOB_NAME_MAX,
    JOB_SPEC,
    MAX_RETRIES,
    TRAINING_INPUT,
    TUNING_JOB,
)
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.vocabulary import vocabulary_of
from gcp_training_jobs.jobspec.load import Judged, enclosed_spec, within_spec
from gcp_training_jobs.jobspec.render.bodies import Renderable
from gcp_training_jobs.jobspec.review import reservations
from gcp_training_jobs.jobspec.review.guardrails import Guardrails
from gcp_training_jobs.jobspec.review.quota_fit import Asker, unwire
from gcp_training_jobs.jobspec.review.reservations import Need
from gcp_training_jobs.jobspec.vocab.custom_job import parse_custom_job_spec, spec_body
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import job_body, parse_job
from gcp_training_jobs.resources.job_model.protection import guardrails_of, protect_of


def is_custom(job: Any) -> bool:
    """Whether a `job` input is written as a Vertex AI CustomJobSpec (else: AI Platform Training's trainingInput), as
    the one detector (io.vocabulary.vocabulary_of) tells."""
    return vocabulary_of(job) == "customJobSpec"


def region_of(job: Any) -> str:
    """Where a `job` input (or a fallback's job data) asks to run, as written: its trainingInput.region, or the
    region beside its jobSpec or tuningJob ("" if not known). This is a different fact from a judged job's region
    (JobFacts.region): it is read before any judging, where nothing is judged (a placement's target for the
    lookup before a create, a preview's job whose region is still unknown); the settings write the job's judged
    region into this field (stack.py), so the two agree for every job a stack makes."""
    if not isinstance(job, Mapping):
        return ""
    where = (job.get(TRAINING_INPUT) or {}).get("region") if TRAINING_INPUT in job else job.get("region")
    return str(where) if isinstance(where, str) else ""


def parse_wire(job: Any) -> Renderable:
    """The job, parsed but not judged (a job that was judged when it entered: the provider's create)."""
    if isinstance(job, Mapping) and TUNING_JOB in job and TRAINING_INPUT not in job:
        from gcp_training_jobs.jobspec.vocab.tuning import parse_tuning_config  # its models, when a job uses them

        config, region, labels = enclosed_spec(job, TUNING_JOB)
        try:
            parsed_config, single = parse_tuning_config(config)
        except SpecError as error:
            raise SpecError(within_spec(error.problems, key=TUNING_JOB)) from None
        return TuningJob(parsed_config, region=region, labels=labels, single_pool=single)
    if not is_custom(job):
        return parse_job(job)
    spec, region, labels = enclosed_spec(job)
    try:
        parsed, single = parse_custom_job_spec(spec)
    except SpecError as error:
        raise SpecError(within_spec(error.problems)) from None
    return VertexJob(parsed, region=region, labels=labels, single_pool=single)


def judge_wire(job: Any, *, backend: str | None = None, today: date | None = None, job_id: str | None = None,
               judge: bool = True) -> Judged:
    """The `job` input read once by the one entry point (load.judge, enclosed): a trainingInput judged by the
    limits of `backend` (AI Platform Training's historic ones, or Vertex AI's of today on its translation), a
    CustomJobSpec by Vertex AI's in its region; every problem at its path in the `job` input. `judge=False`
    parses, translates and renders only (a job judged by `check` before its create). A job that does not parse
    is a SpecError."""
    return load.judge(job, enclosed=True, backend=backend, today=today, job_id=job_id, rules=judge)


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
    stem = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_") or "job"
    if not stem[0].isalpha():
        stem = f"job_{stem}"
    return f"{stem[:JOB_NAME_MAX]}_{suffix or secrets.token_hex(JOB_ID_SUFFIX_HEX // 2)}"


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



# --- The other inputs ---------------------------------------------------------------------------------------


DEFAULT_WAIT_TIMEOUT = 24 * 3600.0


def retries_of(value: Any) -> int:
    """The `retries` input: a whole number from 0 to MAX_RETRIES (Pulumi sends 2 as 2.0); unset: DEFAULT_RETRIES."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return DEFAULT_RETRIES
    return int(value) if value == int(value) and 0 <= value <= MAX_RETRIES else DEFAULT_RETRIES


def retries_problem(value: Any) -> str | None:
    """Why a `retries` input is not allowed (None: it is, or it is unset / unknown)."""
    if value is None or unknown(value):  # unset, or the engine's unknown at preview (other text is refused)
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value != int(value) or not 0 <= value <= MAX_RETRIES:
        return f"{value!r}; allowed: a whole number from 0 to {MAX_RETRIES}"
    return None


def rerun_of(value: Any) -> str | None:
    """The `rerun` token: any text; unset (or empty): None."""
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value) else None


#: The engine's unknown value (a preview's Output not resolved yet), as the Pulumi SDK spells it
#: (`pulumi.runtime.rpc.UNKNOWN`; tests/test_training_job.py holds the two equal). Written here so that reading the
#: inputs loads no Pulumi: the command line and the policy pack import this module.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

#: The flags (true / false) among the inputs.
FLAGS = ("waitForCompletion", "protect", "deleteRecordOnDelete", "persistentResourceDeclared")


def unknown(value: Any) -> bool:
    """Whether a value is the engine's unknown (a preview's Output not resolved yet)."""
    return isinstance(value, str) and value == UNKNOWN


def seconds_problem(value: Any) -> str | None:
    """Why a waitTimeoutSeconds value is not a number of seconds (None: it is, or it is not set)."""
    if value is None or unknown(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of seconds; allowed: a finite number of seconds > 0, e.g. 3600"
    if not math.isfinite(value) or value <= 0:
        return f"{value!r}; allowed: a finite number of seconds > 0, e.g. 3600"
    return None


def input_problems(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(input, what is wrong and what is allowed) for each input of `props` (the engine's camelCase names) that is
    known and not allowed; unset and unknown values pass."""
    found: list[tuple[str, str]] = []

    def given(key: str) -> bool:
        return props.get(key) is not None and not unknown(props.get(key))

    backend = props.get("backend")
    if given("backend") and backend not in BACKENDS:
        found.append(("backend", f"{backend!r}; allowed: {', '.join(BACKENDS)}"))
    for key, what in (("project", "the Google Cloud project id"), ("rerun", "any text (change it to run the job "
                                                                           "again)")):
        if given(key) and not isinstance(props[key], str):
            found.append((key, f"{props[key]!r}; allowed: {what}"))
    if given("job") and not isinstance(props["job"], Mapping):
        found.append(("job", f"{type(props['job']).__name__}; allowed: a mapping, {{'trainingInput': ...}} or "
                             "{'jobSpec': ..., 'region': ...}"))
    if (problem := seconds_problem(props.get("waitTimeoutSeconds"))) is not None:
        found.append(("waitTimeoutSeconds", problem))
    for key in FLAGS:
        if given(key) and not isinstance(props[key], bool):
            found.append((key, f"{props[key]!r}; allowed: true, false"))
    retries = props.get("retries")
    if given("retries") and (problem := retries_problem(retries)) is not None:
        found.append(("retries", problem))
    if given("fallbacks") and not isinstance(props["fallbacks"], list):
        found.append(("fallbacks", f"{props['fallbacks']!r}; allowed: a list of alternatives (region, machineSpec, "
                                   "scheduling)"))
    if given("guardrails") and not isinstance(props["guardrails"], Mapping):
        found.append(("guardrails", f"{props['guardrails']!r}; allowed: a mapping of the stack's guardrails"))
    return found


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
    stack_jobs: tuple[Asker, ...] = ()
    """The `stackQuota` input: what the stack's jobs ask of the quotas at each placement, in order (quota_fit)."""
    stack_reservations: Mapping[str, list[Need]] = field(default_factory=dict)
    """The `stackQuota` input's `reservations`: what the stack's jobs take from each reservation."""
    delete_record: bool = False
    """`deleteRecordOnDelete`: a finished job's record is removed with the resource."""
    resource_declared: bool = False
    """`persistentResourceDeclared`: the persistent resource the job names is the stack's own (made in the same `up`,
    checked offline), not an existing one the check asks Vertex about."""
    job_unknown: bool = False
    """The whole `job` input is unknown (a preview's Output): it is judged at `pulumi up`."""

    @classmethod
    def of(cls, props: Mapping[str, Any]) -> Inputs:
        timeout = props.get("waitTimeoutSeconds")
        rails, rail_problems = guardrails_of(props.get("guardrails"))
        fallbacks, protect = props.get("fallbacks"), props.get("protect")
        return cls(
            name=str(props.get("name", "")),
            project=str(props.get("project", "")),
            backend=str(props.get("backend", "")),
            job=dict(job) if isinstance(job := props.get("job"), dict) else {},
            job_id=str(props.get("jobId") or ""),
            identity=str(props.get("identity") or ""),
            wait=props.get("waitForCompletion") is True,
            wait_timeout=float(timeout) if seconds_problem(timeout) is None and timeout else DEFAULT_WAIT_TIMEOUT,
            retries=retries_of(props.get("retries")),
            rerun=rerun_of(props.get("rerun")),
            props=dict(props),
            guardrails=rails,
            guardrail_problems=tuple(rail_problems),
            protect=protect_of(protect),
            fallbacks=tuple(fallbacks) if isinstance(fallbacks, list) else (),
            stack_jobs=unwire(props.get("stackQuota")),
            stack_reservations=reservations.unwire(props.get("stackQuota"), str(props.get("project") or "")),
            delete_record=props.get("deleteRecordOnDelete") is True,
            resource_declared=props.get("persistentResourceDeclared") is True,
            job_unknown=unknown(props.get("job")),
        )

    @property
    def region(self) -> str:
        return region_of(self.job)

    def parsed(self) -> Renderable:
        return parse_wire(self.job)
