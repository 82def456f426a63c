"""`gcp-training-jobs:jobs.NAME`: one job of a stack judged, its name, its settings shape, its region, the spec rules
(Vertex AI's on vertex stacks) in any of its vocabularies, its fallbacks and its trainer (trainers.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec import load
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import (
    BACKENDS,
    ENV_PREFIX,
    JOB_NAME,
    JOB_NAME_MAX,
    NAMESPACE,
    TRAINING_INPUT,
    TUNING_JOB,
    job_id_of,
)
from gcp_training_jobs.jobspec.core.problems import CredentialWarning, Problem, from_validation_error
from gcp_training_jobs.jobspec.load import FORMS, Judged, enclosed_problem, stand_ins
from gcp_training_jobs.jobspec.rules import Options, region_problem, rule_labels
from gcp_training_jobs.jobspec.vocab.training_input import Job, TrainingInput
from gcp_training_jobs.resources.fallbacks import KEYS as FALLBACK_KEYS
from gcp_training_jobs.resources.fallbacks import alternative_job
from gcp_training_jobs.resources.settings.model import JobSettings
from gcp_training_jobs.resources.settings.secrets import OPAQUE
from gcp_training_jobs.resources.settings.trainers import trainer_problems


def judge_stack_job(name: str, raw: Any, *, root: Path, backend: str, region: str, region_key: str,
                    stack_labels: dict[str, str]) -> tuple[JobSettings | None, list[Problem]]:
    """One job: its name, its settings shape, the spec rules (Vertex AI's on vertex stacks), in either vocabulary.

    The parts are judged independently, so a bad trainer path does not hide a bad accelerator count.
    """
    prefix = f"{NAMESPACE}:jobs.{name}"
    problems: list[Problem] = []
    if not JOB_NAME.fullmatch(name) or len(name) > JOB_NAME_MAX:
        problems.append(Problem(f"{NAMESPACE}:jobs", f"{name!r} is not a valid job name; allowed: lowercase "
                                f"letters, digits, - and _, starting with a letter, at most {JOB_NAME_MAX} "
                                "characters (it names the Pulumi resource, the job id and the job dir)"))
    if not isinstance(raw, dict):
        problems.append(Problem(prefix, f"expected a mapping with trainingInput or jobSpec, got {type(raw).__name__}"))
        return None, problems
    settings: JobSettings | None = None
    try:
        settings = JobSettings.model_validate(raw, context={"root": root})
    except ValidationError as error:
        problems += [plain(p).within(prefix=prefix) for p in from_validation_error(error, JobSettings)]
    unshaped = enclosed_problem(raw)
    if unshaped is not None:
        problems.append(unshaped.within(prefix=prefix))
        return None, problems
    form = next(f for f in FORMS if f in raw)
    if not isinstance(raw[form], dict):
        return None, problems  # the settings model said what is wrong with it
    region, region_key, region_problems = _job_region(raw, form, prefix, backend, region, region_key)
    problems += region_problems
    if region_problems:
        return None, problems

    labels = text_labels(raw.get("labels"))
    own = raw[form].get("labels") if form == TUNING_JOB else None  # a tuning config's own, under the job's
    merged = {**text_labels(stack_labels), **text_labels(own), **labels}
    judged, spec_problems = judge_job_spec(raw, name=name, backend=backend, region=region, region_key=region_key,
                                           labels=merged)
    if settings is not None:
        spec_problems += trainer_problems(settings, root)
    for problem in spec_problems:
        problems.append(problem if problem.path.startswith((region_key, ENV_PREFIX))
                        else problem.within(prefix=prefix))
    alternatives: tuple[Judged, ...] = ()
    if isinstance(raw.get("fallbacks"), list):  # judged even when another key is wrong, like the rest
        alternatives, fallback_problems = _judge_fallbacks(raw, name=name, backend=backend, region=region,
                                                           labels=merged, prefix=prefix, said=spec_problems)
        problems += fallback_problems
    if settings is None or judged is None or problems:
        return None, problems
    named = replace(judged, warnings=tuple(_in_stack(w.within(prefix=prefix)) for w in judged.warnings))
    return settings.judged_as(named, alternatives), problems


def _in_stack(warning: Problem) -> Problem:
    """A job's warning as the stack file's: a credential's names the stack key to encrypt it at, at the least."""
    if not isinstance(warning, CredentialWarning):
        return warning
    return replace(warning, message=f"{warning.message}; or, at the least, encrypted in the stack: `pulumi config "
                   f"set --secret --path '{warning.path}' -- VALUE` (a value written in the stack file is plain text "
                   "in the repository and in the state's copy of the stack's config)")


def _job_region(raw: dict[str, Any], form: str, prefix: str, backend: str, region: str,
                region_key: str) -> tuple[str, str, list[Problem]]:
    """Where a job runs and the key that said so: `jobs.NAME.region` (beside a jobSpec or a tuningJob; beside a
    trainingInput only as the same region as its trainingInput.region), else the stack's region and its key."""
    given = raw.get("region")
    if given is None:
        return region, region_key, []
    at = f"{prefix}.region"
    if not isinstance(given, str):
        return region, region_key, []  # the settings model says what is wrong with it
    if given != OPAQUE and (refused := region_problem(given, at, backend)) is not None:  # the one region rule
        return region, region_key, [refused]
    written = raw[form].get("region") if form == TRAINING_INPUT else None
    if isinstance(written, str) and written != given:
        return region, region_key, [Problem(at, f"{given!r} differs from {prefix}.{TRAINING_INPUT}.region "
                                            f"{written!r}; allowed: one region, in either place (the same in both)")]
    return given, at, []


def _judge_fallbacks(raw: dict[str, Any], *, name: str, backend: str, region: str, labels: dict[str, Any],
                     prefix: str, said: list[Problem]) -> tuple[tuple[Judged, ...], list[Problem]]:
    """Each alternative of `jobs.NAME.fallbacks`, built as job data and judged by the same pass as the job itself;
    its problems named at `jobs.NAME.fallbacks[i]` (then the path within the job it makes), but for those the job
    itself has (`said`: its own, within the job), which the job reports once, at its path. An entry the settings
    model refuses (not a mapping, an unknown key) is reported there, once."""
    own = set(said)
    judged: list[Judged] = []
    problems: list[Problem] = []
    for index, fallback in enumerate(raw["fallbacks"]):
        where = f"{prefix}.fallbacks[{index}]"
        if not isinstance(fallback, dict) or set(fallback) - set(FALLBACK_KEYS):
            continue
        data, bad = alternative_job(raw, fallback)
        problems += [p.within(prefix=where) for p in bad]
        if bad:
            continue
        ti = data.get(TRAINING_INPUT)
        given = fallback.get("region") if isinstance(fallback.get("region"), str) else None
        if given is not None and (refused := region_problem(given, f"{where}.region", backend)) is not None:
            problems.append(refused)  # the one region rule's words
            continue
        there = str(given or (ti.get("region") if isinstance(ti, dict) and ti.get("region") else region))
        alternative, spec_problems = judge_job_spec(data, name=name, backend=backend, region=there,
                                                    region_key=f"{where}.region", labels=labels)
        problems += [p if p.path.startswith(f"{where}.region") else p.within(prefix=where) for p in spec_problems
                     if p not in own]
        if alternative is not None and not spec_problems:
            judged.append(alternative)
    return tuple(judged), problems


def judge_job_spec(
    raw: dict[str, Any], *, name: str, backend: str, region: str, region_key: str, labels: dict[str, Any],
) -> tuple[Judged | None, list[Problem]]:
    """A job's trainingInput, jobSpec or tuningJob (exactly one, enclosed_problem) read once by the one pass
    (load.judge), told what the stack knows of it: its region (`region_key` said so), its labels (the stack's, a
    tuning config's own and the job's, in that order; a value encrypted in the stack, OPAQUE, judged as any valid
    one) and whether the stack builds its trainer package (`package_supplied`). The job as judged (None when it has
    problems) and its problems. A trainingInput is judged by the limits of the stack's backend (and its Vertex AI
    translation); a CustomJobSpec or a tuning config by Vertex AI's (vertex stacks only). A region the job inherits
    that the region rule refuses is said once, at the key that wrote it: not again within the job."""
    form = next(f for f in FORMS if f in raw)
    if form != TRAINING_INPUT and backend not in BACKENDS:
        return None, []  # the backend key is reported
    data: dict[str, Any] = {form: raw[form]}
    if labels:
        data["labels"] = labels
    try:  # one pass: parsed, translated, judged and rendered (what the Vertex AI translation cannot express)
        judged = load.judge(data, enclosed=True, backend=backend, backend_at=f"{NAMESPACE}:backend", region=region,
                            region_at=region_key, job_id=job_id_of(name), package_supplied="trainer" in raw,
                            opaque=OPAQUE)
        problems = list(judged.problems)
    except SpecError as error:  # it does not parse
        judged, problems = None, list(error.problems)
    if form == TRAINING_INPUT and "region" in raw[form]:
        return (judged if judged is not None and judged.ok else None), problems  # its region is its own
    at = f"{TRAINING_INPUT}.region" if form == TRAINING_INPUT else region_key  # where judge names the region
    refused = region == OPAQUE or region_problem(region, region_key, backend) is not None  # said at region_key
    said = [problem if problem.path != at or form != TRAINING_INPUT
            else replace(problem, message=f"{problem.message} (the job inherits {region_key})")
            for problem in problems if not (refused and problem.path == at)]
    return (judged if judged is not None and judged.ok else None), said


def plain(problem: Problem) -> Problem:
    """Our validators' messages without pydantic's "Value error, " in front."""
    return Problem(problem.path, problem.message.replace(": Value error, ", ": "), problem.file)


def text_labels(labels: Any) -> dict[str, Any]:
    """The labels whose key and value are text (a label given as a number, `env: 5`, is refused by the settings
    model, naming the field: `labels.env: 5: a number, not text`), the rest left out so that no rule sees one."""
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(labels, Mapping) else {}


def label_problems(labels: Mapping[str, Any]) -> list[Problem]:
    """Label syntax (the stack's, a persistent resource's), judged by the same rule as a job's labels, at
    `labels...` (a value encrypted in the stack, OPAQUE, judged as any valid one, as a job's are)."""
    if not labels or not all(isinstance(v, str) for v in labels.values()):
        return []
    return list(rule_labels(Job(labels=stand_ins(labels, OPAQUE), training_input=TrainingInput()), Options()))
