"""The `job` input of a TrainingJob as data, in either vocabulary: what stack.py sends, the provider reads and
the policy pack judges. Pure (no Pulumi), so the settings, the provider and the pack read it alike.

Two forms, one vocabulary each:
- the seeds' ml v1 Job: `{"trainingInput": {...}, "labels": {...}}` (the region is trainingInput.region; the
  job id is drawn at create);
- a Vertex AI CustomJobSpec: `{"jobSpec": {...}, "region": "us-central1", "labels": {...}}`: the spec as
  `gcloud ai custom-jobs create --config` reads it (int64 fields as decimal strings, as the API writes them),
  plus what gcloud takes from its flags: the region (never part of the spec) and the labels. Vertex only.

What identifies a job's work (`spec_of`, the `pulumi-spec` label and the diff) is its parsed form, so the
noise Pulumi adds (8 sent back as 8.0, int64 as text or as a number, dict order) never reads as a change.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from components.jobspec import load
from components.jobspec.core.errors import SpecError
from components.jobspec.core.names import (
    JOB_ID_SUFFIX_HEX,
    JOB_NAME_MAX,
    JOB_SPEC,
    TRAINING_INPUT,
)
from components.jobspec.io.vocabulary import vocabulary_of
from components.jobspec.load import Judged, enclosed_spec, within_spec
from components.jobspec.render.bodies import AnyJob
from components.jobspec.vocab.custom_job import parse_custom_job_spec, spec_body
from components.jobspec.vocab.jobs import VertexJob
from components.jobspec.vocab.training_input import Job, job_body, parse_job


def is_custom(job: Any) -> bool:
    """Whether a `job` input is written as a Vertex AI CustomJobSpec (else: the seeds' trainingInput), as the one
    detector (io.vocabulary.vocabulary_of) tells."""
    return vocabulary_of(job) == "customJobSpec"


def region_of(job: Any) -> str:
    """Where the job runs: its trainingInput.region, or the CustomJobSpec form's region ("" if not known)."""
    if not isinstance(job, Mapping):
        return ""
    where = job.get("region") if is_custom(job) else (job.get(TRAINING_INPUT) or {}).get("region")
    return str(where) if isinstance(where, str) else ""


def parse_wire(job: Any) -> AnyJob:
    """The job, parsed but not judged (a job that was judged when it entered: the provider's create)."""
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


def load_wire(job: Any, *, backend: str | None = None, today: date | None = None) -> AnyJob:
    """The judged job's model (judge_wire), or SpecError with every problem."""
    job_model = judge_wire(job, backend=backend, today=today).checked().job
    assert isinstance(job_model, Job | VertexJob)
    return job_model


def wire_of(job: AnyJob) -> dict[str, Any]:
    """A validated job as the `job` input carries it (JSON API names, int64 as decimal strings)."""
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


def spec_of(job: dict[str, Any], parsed: AnyJob | None = None) -> Any:
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


__all__ = ["JOB_SPEC", "TRAINING_INPUT", "AnyJob", "Job", "VertexJob", "canonical", "is_custom", "judge_wire",
           "known_only", "load_wire", "new_job_id", "parse_wire", "preview_job_id", "region_of", "spec_of", "wire_of"]
