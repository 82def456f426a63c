"""Judging a stack's config: the settings models, then every job against the spec rules (and Vertex's
limits on vertex stacks), every problem at once, each naming its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from components.jobspec import catalog
from components.jobspec.errors import SpecError
from components.jobspec.load import load_job
from components.jobspec.models import Job, TrainingInput
from components.jobspec.names import DEFAULT_BACKEND, DEFAULT_REGION, JOB_NAME, JOB_NAME_MAX, NAMESPACE
from components.jobspec.problems import Problem, allowed, from_validation_error
from components.jobspec.render import render_body
from components.jobspec.rules import Options, rule_labels
from components.resources.settings.decimals import OBJECT_KEYS
from components.resources.settings.model import JobSettings, StackSettings
from components.resources.settings.secrets import OPAQUE, bounds_problem, is_secure, opaque


def judge(config: dict[str, Any], root: Path, secret_keys: frozenset[str] = frozenset()) -> StackSettings:
    """The settings of a flat config mapping (`namespace:key` -> value); SpecError with every problem."""
    problems: list[Problem] = []
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
    try:
        base = StackSettings.model_validate(ours, context={"root": root})
    except ValidationError as error:
        base = None
        for problem in map(_plain, from_validation_error(error, StackSettings)):
            if problem.path == "project" and problem.message == "required field is missing":
                problem = Problem("project", "required: the Google Cloud project id; set gcp:project (or "
                                  f"{NAMESPACE}:project)")
            problems.append(Problem(key_of(problem.path), problem.message))

    backend = ours.get("backend", DEFAULT_BACKEND)
    region = ours.get("region") if isinstance(ours.get("region"), str) else DEFAULT_REGION
    region = region or DEFAULT_REGION
    if region not in catalog.TRAINING_REGIONS and region != OPAQUE:
        problems.append(Problem(region_key, f"{region!r} is not a training region; allowed: "
                                f"{allowed(catalog.TRAINING_REGIONS)}"))
    labels_given = ours.get("labels")
    stack_labels: dict[str, Any] = labels_given if isinstance(labels_given, dict) else {}
    label_problems = _label_problems(stack_labels)
    problems += [Problem(f"{NAMESPACE}:{p.path}", p.message) for p in label_problems]

    jobs: dict[str, JobSettings] = {}
    if jobs_raw is not None and not isinstance(jobs_raw, dict):
        problems.append(Problem(f"{NAMESPACE}:jobs", f"expected a mapping of job name to job, got "
                                f"{type(jobs_raw).__name__}"))
        jobs_raw = {}
    for name, raw in (jobs_raw or {}).items():
        judged, job_problems = _judge_job(str(name), raw, root=root, backend=str(backend), region=region,
                                          region_key=region_key,
                                          stack_labels={} if label_problems else stack_labels)
        problems += job_problems
        if judged is not None:
            jobs[str(name)] = judged

    if base is not None:
        problems += _tpu_access_problems(base)
    if problems:
        raise SpecError(_unique(problems))
    assert base is not None
    settings = base.model_copy(update={"jobs": jobs})
    settings._root = root
    settings._secret_keys = secret_keys
    return settings


def _plain(problem: Problem) -> Problem:
    """Our validators' messages without pydantic's "Value error, " in front."""
    return Problem(problem.path, problem.message.replace(": Value error, ", ": "), problem.file)


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


#: What an encrypted label value is judged as offline (any valid value: the real one is judged by Google).
SECRET_LABEL_STAND_IN = "secret"


def _judgeable(labels: dict[str, Any]) -> dict[str, Any]:
    """Labels with encrypted values (OPAQUE offline) standing in as a valid value, so the rest is judged."""
    return {k: SECRET_LABEL_STAND_IN if v == OPAQUE else v for k, v in labels.items()}


def _label_problems(labels: dict[str, Any]) -> list[Problem]:
    """Label syntax, judged by the same rule as a job's labels."""
    if not labels or not all(isinstance(v, str) for v in labels.values()):
        return []
    return list(rule_labels(Job(labels=_judgeable(labels), training_input=TrainingInput()), Options()))


def _judge_job(name: str, raw: Any, *, root: Path, backend: str, region: str, region_key: str,
               stack_labels: dict[str, str]) -> tuple[JobSettings | None, list[Problem]]:
    """One job: its name, its settings shape, the spec rules (and Vertex's limits on vertex stacks).

    The parts are judged independently, so a bad trainer path does not hide a bad accelerator count.
    """
    prefix = f"{NAMESPACE}:jobs.{name}"
    problems: list[Problem] = []
    if not JOB_NAME.fullmatch(name) or len(name) > JOB_NAME_MAX:
        problems.append(Problem(f"{NAMESPACE}:jobs", f"{name!r} is not a valid job name; allowed: lowercase "
                                f"letters, digits, - and _, starting with a letter, at most {JOB_NAME_MAX} "
                                "characters (it names the Pulumi resource, the job id and the job dir)"))
    if not isinstance(raw, dict):
        problems.append(Problem(prefix, f"expected a mapping with trainingInput, got {type(raw).__name__}"))
        return None, problems
    settings: JobSettings | None = None
    try:
        settings = JobSettings.model_validate(raw, context={"root": root})
    except ValidationError as error:
        problems += [_plain(p).within(prefix=prefix) for p in from_validation_error(error, JobSettings)]
    training_input = raw.get("trainingInput")
    if not isinstance(training_input, dict):
        return None, problems  # the settings model said what is wrong with it

    labels_given = raw.get("labels")
    labels: dict[str, Any] = labels_given if isinstance(labels_given, dict) else {}
    data: dict[str, Any] = {"trainingInput": training_input}
    merged = {**stack_labels, **labels}
    if merged:
        data["labels"] = _judgeable(merged)
    job: Job | None = None
    spec_problems: list[Problem] = []
    try:
        job = load_job(data, default_region=region, package_supplied="trainer" in raw)
        if OPAQUE in merged.values():  # judged with stand-ins; the job keeps what the stack says
            job = job.model_copy(update={"labels": merged})
    except SpecError as error:
        spec_problems += error.problems
    if settings is not None:
        spec_problems += _trainer_problems(settings, root)
    if job is not None and backend == "vertex":
        spec_problems += _vertex_problems(job, name)
    inherits_region = "region" not in training_input
    for problem in spec_problems:
        if inherits_region and problem.path == "trainingInput.region":
            if region not in catalog.TRAINING_REGIONS:
                continue  # reported once, at the stack's region key
            problem = Problem(problem.path, f"{problem.message} (the job inherits {region_key})")
        problems.append(problem.within(prefix=prefix))
    if settings is None or job is None or problems:
        return None, problems
    settings._job = job
    return settings, problems


def _trainer_problems(settings: JobSettings, root: Path) -> list[Problem]:
    """A built trainer must hold the job's module, and cannot go with a container image."""
    trainer = settings.trainer
    if trainer is None:
        return []
    ti = settings.training_input
    master = ti.get("masterConfig")
    image = master.get("imageUri") if isinstance(master, dict) else None
    if image:
        return [Problem("trainer", f"is set with trainingInput.masterConfig.imageUri {image!r}; a container job "
                        "carries its code in the image; allowed: one of trainer or imageUri")]
    module = ti.get("pythonModule")
    if isinstance(module, str) and module and not trainer.has_module(root, module):
        return [Problem("trainingInput.pythonModule", f"{module!r} is not a module of trainer {trainer.path} "
                        f"(no {module.replace('.', '/')}.py in it); allowed: a module of the trainer package, "
                        "e.g. trainer.task")]
    return []


def _vertex_problems(job: Job, name: str) -> list[Problem]:
    try:
        render_body(job, "vertex", name.replace("-", "_"))
    except SpecError as error:
        return list(error.problems)
    return []


def _tpu_access_problems(base: StackSettings) -> list[Problem]:
    access = base.tpu_access
    if base.backend == "vertex" and access.grant == "true" and access.service_account is None:
        return [Problem(f"{NAMESPACE}:tpuAccess.serviceAccount", "required when tpuAccess.grant is true on the "
                        "vertex backend: the lookup (projects.getConfig) is an AI Platform Training method, shut "
                        "down on 2025-01-31; allowed: the TPU service account's email")]
    return []

