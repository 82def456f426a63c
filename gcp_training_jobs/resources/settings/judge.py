"""Judging a stack's config: the settings models, the stack's own keys (region, labels, TPU access), then every job
(jobs.py) and persistent resource (persistent.py), every problem at once, each naming its key."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec.catalog.credentials import INSTEAD
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import DEFAULT_BACKEND, DEFAULT_REGION, NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.rules import region_problem
from gcp_training_jobs.resources.settings import placement
from gcp_training_jobs.resources.settings.candidates import judge_candidates
from gcp_training_jobs.resources.settings.credentials import plaintext_credential_problems
from gcp_training_jobs.resources.settings.decimals import OBJECT_KEYS
from gcp_training_jobs.resources.settings.jobs import judge_stack_job, label_problems, plain
from gcp_training_jobs.resources.settings.model import JobSettings, StackSettings
from gcp_training_jobs.resources.settings.persistent import fit_problems_of, judge_resources
from gcp_training_jobs.resources.settings.secrets import (
    OPAQUE,
    bounds_problem,
    is_label_path,
    is_secure,
    opaque,
    secure_paths,
)

#: Why a secret label value is refused, and what to do instead.
SECRET_LABEL = ("is a secret (`pulumi config set --secret`), and a label is sent to Google in plain text (anyone "
                "who can view the job sees it, and billing exports carry it): it would not stay secret; allowed: a "
                f"plain label value; for a secret, {INSTEAD}")


def judge(config: dict[str, Any], root: Path, secret_keys: frozenset[str] = frozenset(),
          secret_paths: frozenset[str] = frozenset()) -> StackSettings:
    """The settings of a flat config mapping (`namespace:key` -> value); SpecError with every problem.
    `secret_paths`: where encrypted values were (secrets.secure_paths), when `config` holds them decrypted (a
    program); encrypted values still in `config` (`secure: ...`, a stack file read offline) are found here."""
    secret_labels = {p for p in secure_paths(config) | secret_paths | _opaque_labels(config) if is_label_path(p)}
    problems: list[Problem] = [Problem(f"{NAMESPACE}:{path}", SECRET_LABEL) for path in sorted(secret_labels)]
    problems += plaintext_credential_problems(config, secret_paths, secret_keys)
    ours: dict[str, Any] = {}
    for full_key, value in config.items():
        namespace, colon, key = full_key.partition(":")
        if not colon:
            problems.append(Problem(full_key, "config keys are namespaced; did you mean "
                                    f"{NAMESPACE}:{full_key}?"))
            continue
        if namespace != NAMESPACE:
            continue
        if key in OBJECT_KEYS and is_secure(value):
            problems.append(Problem(full_key, "is encrypted as a whole; allowed: a plain mapping (encrypt single "
                                    f"values in it: pulumi config set --secret --path '{key}.NAME')"))
            continue
        if key in ("region", "project") and value is None:
            continue
        if (too_big := bounds_problem(value)) is not None:  # before any walk that would expand it
            problems.append(Problem(full_key, too_big))
            continue
        ours[key] = opaque(value)

    region_key, project_key = f"{NAMESPACE}:region", f"{NAMESPACE}:project"
    if ours.get("region") is None and config.get("gcp:region"):
        ours["region"], region_key = opaque(config["gcp:region"]), "gcp:region"
    if ours.get("project") is None and config.get("gcp:project"):
        ours["project"], project_key = opaque(config["gcp:project"]), "gcp:project"

    def key_of(path: str) -> str:
        head = path.split(".", 1)[0].split("[", 1)[0]
        if head == "region":
            return region_key + path[len(head):]
        if head == "project":
            return project_key + path[len(head):]
        return f"{NAMESPACE}:{path}"

    jobs_raw = ours.pop("jobs", None)
    resources_raw = ours.pop("persistentResources", None)
    try:
        base = StackSettings.model_validate(ours, context={"root": root})
    except ValidationError as error:
        base = None
        for problem in map(plain, from_validation_error(error, StackSettings)):
            if problem.path == "project" and problem.message == "required field is missing":
                problem = Problem("project", "required: the Google Cloud project id; set gcp:project (or "
                                  f"{NAMESPACE}:project)")
            problems.append(Problem(key_of(problem.path), problem.message))

    backend = ours.get("backend", DEFAULT_BACKEND)
    region = ours.get("region") if isinstance(ours.get("region"), str) else DEFAULT_REGION
    region = region or DEFAULT_REGION
    if region != OPAQUE and (refused := region_problem(region, region_key, str(backend))) is not None:
        problems.append(refused)  # the one region rule; each job inheriting it is not told again
    labels_given = ours.get("labels")
    stack_labels: dict[str, Any] = labels_given if isinstance(labels_given, dict) else {}
    bad_labels = label_problems(stack_labels)
    problems += [Problem(f"{NAMESPACE}:{p.path}", p.message) for p in bad_labels]

    jobs: dict[str, JobSettings] = {}
    if jobs_raw is not None and not isinstance(jobs_raw, dict):
        problems.append(Problem(f"{NAMESPACE}:jobs", f"expected a mapping of job name to job, got "
                                f"{type(jobs_raw).__name__}"))
        jobs_raw = {}
    for name, raw in (jobs_raw or {}).items():
        judged, job_problems = judge_stack_job(str(name), raw, root=root, backend=str(backend), region=region,
                                         region_key=region_key,
                                         stack_labels={} if bad_labels else stack_labels)
        problems += job_problems
        if judged is not None:
            jobs[str(name)] = judged

    resources, resource_problems = judge_resources(resources_raw, region=region, backend=str(backend),
                                                   stack_labels={} if bad_labels else stack_labels)
    problems += resource_problems
    for name, job in jobs.items():
        problems += fit_problems_of(name, job.facts, resources)

    if base is not None:
        problems += _tpu_access_problems(base)
        problems += [p for name, job in jobs.items() for p in placement.job_problems(name, job, base.placement)]
    secrets = secure_paths(config) | secret_paths

    def held(base: StackSettings) -> StackSettings:
        settings = base.model_copy(update={"jobs": jobs, "persistent_resources": dict(resources_raw or {})})
        return settings.with_resources(resources).placed(root, secret_keys, secrets)

    if problems:
        raise StackSpecError(_unique(problems), held(base) if base is not None else None)
    assert base is not None
    settings = held(base)
    return settings.with_candidates(judge_candidates(settings))


class StackSpecError(SpecError):
    """Every problem of a stack's config, with what of it did judge: `judged`, the stack's settings holding only the
    jobs that judged (their facts, fallbacks and warnings; a job with a mistake is left out), None when the stack's
    own keys did not judge. What `validate` and `plan` hold to the guardrails in the same round
    (settings.guardrails.one_round); nothing is deployed from it."""

    def __init__(self, problems: Sequence[Problem], judged: StackSettings | None = None):
        super().__init__(problems)
        self.judged = judged


def _opaque_labels(config: dict[str, Any]) -> set[str]:
    """The label values already standing in for a secret (OPAQUE: `plan` runs the program with them), as paths."""
    labels = config.get(f"{NAMESPACE}:labels")
    found = {f"labels.{k}" for k, v in labels.items() if v == OPAQUE} if isinstance(labels, dict) else set()
    jobs = config.get(f"{NAMESPACE}:jobs")
    for name, job in (jobs.items() if isinstance(jobs, dict) else []):
        job_labels = job.get("labels") if isinstance(job, dict) else None
        if isinstance(job_labels, dict):
            found |= {f"jobs.{name}.labels.{k}" for k, v in job_labels.items() if v == OPAQUE}
    return found


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def _tpu_access_problems(base: StackSettings) -> list[Problem]:
    access = base.tpu_access
    if base.backend == "vertex" and access.grant == "true" and access.service_account is None:
        return [Problem(f"{NAMESPACE}:tpuAccess.serviceAccount", "required when tpuAccess.grant is true on the "
                        "vertex backend: the lookup (projects.getConfig) is an AI Platform Training method, shut "
                        "down on 2025-01-31; allowed: the TPU service account's email")]
    return []
