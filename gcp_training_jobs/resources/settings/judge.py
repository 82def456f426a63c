"""Judging a stack's config: the settings models, then every job against the spec rules (and Vertex's
limits on vertex stacks), every problem at once, each naming its key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec import catalog, load
from gcp_training_jobs.jobspec.catalog.credentials import INSTEAD
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import (
    BACKENDS,
    DEFAULT_BACKEND,
    DEFAULT_REGION,
    ENV_PREFIX,
    JOB_NAME,
    JOB_NAME_MAX,
    JOB_SPEC,
    NAMESPACE,
    TRAINING_INPUT,
    TUNING_JOB,
    VERTEX,
)
from gcp_training_jobs.jobspec.core.problems import CredentialWarning, Problem, allowed, from_validation_error
from gcp_training_jobs.jobspec.io.vocabulary import pool_path
from gcp_training_jobs.jobspec.load import FORMS, Judged, enclosed_problem
from gcp_training_jobs.jobspec.rules import Options, rule_labels
from gcp_training_jobs.jobspec.vocab.custom_job import parse_custom_job_spec
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job, TrainingInput
from gcp_training_jobs.resources.fallbacks import KEYS as FALLBACK_KEYS
from gcp_training_jobs.resources.fallbacks import alternative_job
from gcp_training_jobs.resources.settings.decimals import OBJECT_KEYS
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
        for problem in map(_plain, from_validation_error(error, StackSettings)):
            if problem.path == "project" and problem.message == "required field is missing":
                problem = Problem("project", "required: the Google Cloud project id; set gcp:project (or "
                                  f"{NAMESPACE}:project)")
            problems.append(Problem(key_of(problem.path), problem.message))

    backend = ours.get("backend", DEFAULT_BACKEND)
    region = ours.get("region") if isinstance(ours.get("region"), str) else DEFAULT_REGION
    region = region or DEFAULT_REGION
    if region not in _regions(str(backend)) and region != OPAQUE:
        problems.append(Problem(region_key, f"{region!r} is not a training region; allowed: "
                                f"{allowed(_regions(str(backend)))}"))
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

    resources, resource_problems = judge_resources(resources_raw, region=region, backend=str(backend),
                                                   stack_labels={} if label_problems else stack_labels)
    problems += resource_problems
    for name, job in jobs.items():
        problems += fit_problems_of(name, job.facts, resources)

    if base is not None:
        problems += _tpu_access_problems(base)
    if problems:
        raise SpecError(_unique(problems))
    assert base is not None
    settings = base.model_copy(update={"jobs": jobs, "persistent_resources": dict(resources_raw or {})})
    return settings.with_resources(resources).placed(root, secret_keys)


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
        problems += [_plain(p).within(prefix=prefix) for p in from_validation_error(error, JobSettings)]
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

    labels_given = raw.get("labels")
    labels: dict[str, Any] = labels_given if isinstance(labels_given, dict) else {}
    own = raw[form].get("labels") if form == TUNING_JOB else None  # a tuning config's own, under the job's
    merged = {**stack_labels, **(own if isinstance(own, dict) else {}), **labels}
    judged, spec_problems = _judge_spec(raw, name=name, backend=backend, region=region, region_key=region_key,
                                        labels=merged)
    if settings is not None:
        spec_problems += _trainer_problems(settings, root)
    for problem in spec_problems:
        problems.append(problem if problem.path.startswith((region_key, ENV_PREFIX))
                        else problem.within(prefix=prefix))
    alternatives: tuple[Judged, ...] = ()
    if isinstance(raw.get("fallbacks"), list):  # judged even when another key is wrong, like the rest
        alternatives, fallback_problems = _judge_fallbacks(raw, name=name, backend=backend, region=region,
                                                           labels=merged, prefix=prefix)
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
    if given not in _regions(backend) and given != OPAQUE:
        return region, region_key, [Problem(at, f"{given!r} is not a training region; allowed: "
                                            f"{allowed(_regions(backend))}")]
    written = raw[form].get("region") if form == TRAINING_INPUT else None
    if isinstance(written, str) and written != given:
        return region, region_key, [Problem(at, f"{given!r} differs from {prefix}.{TRAINING_INPUT}.region "
                                            f"{written!r}; allowed: one region, in either place (the same in both)")]
    return given, at, []


def _judge_fallbacks(raw: dict[str, Any], *, name: str, backend: str, region: str, labels: dict[str, Any],
                     prefix: str) -> tuple[tuple[Judged, ...], list[Problem]]:
    """Each alternative of `jobs.NAME.fallbacks`, built as job data and judged by the same pass as the job itself;
    its problems named at `jobs.NAME.fallbacks[i]` (then the path within the job it makes). An entry the settings
    model refuses (not a mapping, an unknown key) is reported there, once."""
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
        if given is not None and given not in _regions(backend):
            problems.append(Problem(f"{where}.region", f"{given!r} is not a training region; allowed: "
                                    f"{allowed(_regions(backend))}"))
            continue
        there = str(given or (ti.get("region") if isinstance(ti, dict) and ti.get("region") else region))
        alternative, spec_problems = _judge_spec(data, name=name, backend=backend, region=there,
                                                 region_key=f"{where}.region", labels=labels)
        problems += [p if p.path.startswith(f"{where}.region") else p.within(prefix=where) for p in spec_problems]
        if alternative is not None and not spec_problems:
            judged.append(alternative)
    return tuple(judged), problems


#: A package URI standing in, while a jobSpec is judged, for the trainer package the stack builds and uploads.
TRAINER_STAND_IN = "gs://trainer-package-built-by-the-stack/trainer.tar.gz"


def _judge_spec(
    raw: dict[str, Any], *, name: str, backend: str, region: str, region_key: str, labels: dict[str, Any],
) -> tuple[Judged | None, list[Problem]]:
    """A job's trainingInput or jobSpec (exactly one, enclosed_problem) read by the one pass (load.judge): the job as
    judged (None when it has problems; its model with the stack's labels and region), and its problems. A
    trainingInput is judged by the limits of the
    stack's backend (and its Vertex AI translation); a CustomJobSpec by Vertex AI's in the stack's region (vertex
    stacks only), carried over as written."""
    custom = JOB_SPEC in raw
    if (custom or TUNING_JOB in raw) and backend not in BACKENDS:
        return None, []  # the backend key is reported
    if TUNING_JOB in raw:
        return _judge_tuning(raw, name=name, backend=backend, region=region, region_key=region_key, labels=labels)
    written = raw[JOB_SPEC] if custom else raw[TRAINING_INPUT]
    data: dict[str, Any] = ({JOB_SPEC: _with_trainer_stand_in(written) if "trainer" in raw else written} if custom
                            else {TRAINING_INPUT: written})
    if labels:
        data["labels"] = _judgeable(labels)
    try:  # one pass: parsed, translated, judged and rendered (what the Vertex AI translation cannot express)
        judged = load.judge(data, enclosed=True, backend=backend, backend_at=f"{NAMESPACE}:backend", region=region,
                       region_at=region_key, job_id=name.replace("-", "_"), package_supplied="trainer" in raw)
        problems = list(judged.problems)
    except SpecError as error:  # it does not parse
        judged, problems = None, list(error.problems)
    if custom:
        if problems or judged is None:
            known_region = region in _regions(backend)  # else reported once, at the stack's region key
            return None, [p for p in problems if known_region or p.path != region_key]
        assert isinstance(judged.job, VertexJob)
        parsed, single = (parse_custom_job_spec(written) if data[JOB_SPEC] is not written  # as given, not its stand-in
                          else (judged.job.spec, judged.job.single_pool))
        return replace(judged, job=VertexJob(parsed, region=region, labels=labels or None, single_pool=single)), []
    job: Job | None = None
    if judged is not None and judged.ok and isinstance(judged.job, Job):
        job = judged.job
        if OPAQUE in labels.values():  # judged with stand-ins; the job keeps what the stack says
            job = job.model_copy(update={"labels": labels})
    if "region" not in written:
        inherited = []
        for problem in problems:
            if problem.path == f"{TRAINING_INPUT}.region":
                if region not in _regions(backend):
                    continue  # reported once, at the stack's region key
                problem = Problem(problem.path, f"{problem.message} (the job inherits {region_key})")
            inherited.append(problem)
        problems = inherited
    if job is None or judged is None:
        return None, problems
    return replace(judged, job=job), problems


def _judge_tuning(
    raw: dict[str, Any], *, name: str, backend: str, region: str, region_key: str, labels: dict[str, Any],
) -> tuple[Judged | None, list[Problem]]:
    """A job's tuningJob read by the one pass (load.judge, as the tuning file on its own is judged) in the job's
    region: the job as judged (its labels the stack's, the config's and the job's, in that order), or its problems
    named under tuningJob."""
    written = raw[TUNING_JOB]
    trial = written.get("trialJobSpec")
    config = {**written, "trialJobSpec": _with_trainer_stand_in(trial)} \
        if "trainer" in raw and isinstance(trial, dict) else written
    data: dict[str, Any] = {TUNING_JOB: config}
    if labels:
        data["labels"] = _judgeable(labels)
    try:
        judged = load.judge(data, enclosed=True, backend=backend, backend_at=f"{NAMESPACE}:backend", region=region,
                            region_at=region_key, job_id=name.replace("-", "_"))
        problems = list(judged.problems)
    except SpecError as error:
        judged, problems = None, list(error.problems)
    if problems or judged is None:
        known_region = region in _regions(backend)  # else reported once, at the stack's region key
        return None, [p for p in problems if known_region or p.path != region_key]
    assert isinstance(judged.job, TuningJob)
    job = judged.job
    if config is not written:  # the trainer's stand-in judged; the job keeps the config as given
        from gcp_training_jobs.jobspec.vocab.tuning import parse_tuning_config

        parsed, single = parse_tuning_config(written)
        job = TuningJob(parsed, region=job.region, labels=job.labels, job_id=job.job_id, single_pool=single)
    if OPAQUE in labels.values():  # judged with stand-ins; the job keeps what the stack says
        job = TuningJob(job.config, region=job.region, labels=dict(labels), job_id=job.job_id,
                        single_pool=job.single_pool)
    return replace(judged, job=job), []


def _with_trainer_stand_in(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with the trainer package's URI standing in in every pythonPackageSpec's packageUris."""
    pools = spec.get("workerPoolSpecs")
    if not isinstance(pools, list | dict):
        return spec

    def with_package(pool: Any) -> Any:
        package = pool.get("pythonPackageSpec") if isinstance(pool, dict) else None
        if not isinstance(package, dict):
            return pool
        uris = package.get("packageUris")
        uris = [TRAINER_STAND_IN, *uris] if isinstance(uris, list) else [TRAINER_STAND_IN]
        return {**pool, "pythonPackageSpec": {**package, "packageUris": uris}}

    packaged = with_package(pools) if isinstance(pools, dict) else [with_package(pool) for pool in pools]
    return {**spec, "workerPoolSpecs": packaged}


def _regions(backend: str) -> tuple[str, ...]:
    """Where the stack's backend trains: Vertex AI's regions, or AI Platform Training's."""
    return tuple(catalog.VERTEX_TRAINING_REGIONS) if backend == VERTEX else tuple(catalog.TRAINING_REGIONS)


def _trainer_problems(settings: JobSettings, root: Path) -> list[Problem]:
    """A built trainer must hold the job's module(s), and cannot go with a container image."""
    trainer = settings.trainer
    if trainer is None:
        return []
    if settings.job_spec is not None or settings.tuning_job is not None:
        return _custom_trainer_problems(settings, root)
    ti = settings.training_input or {}
    master = ti.get("masterConfig")
    image = master.get("imageUri") if isinstance(master, dict) else None
    if image:
        return [Problem("trainer", f"is set with trainingInput.masterConfig.imageUri {image!r}; a container job "
                        "carries its code in the image; allowed: one of trainer or imageUri")]
    return _module_problem(trainer, root, ti.get("pythonModule"), f"{TRAINING_INPUT}.pythonModule")


def _custom_trainer_problems(settings: JobSettings, root: Path) -> list[Problem]:
    """A trainer with a jobSpec goes into its pythonPackageSpec pools, each running a module of it."""
    assert settings.trainer is not None
    trial = (settings.tuning_job or {}).get("trialJobSpec")
    spec, at = (settings.job_spec, JOB_SPEC) if settings.job_spec is not None else \
        (trial if isinstance(trial, dict) else {}, f"{TUNING_JOB}.trialJobSpec")
    pools = (spec or {}).get("workerPoolSpecs")
    single = isinstance(pools, dict)
    listed = [pools] if single else pools if isinstance(pools, list) else []
    problems: list[Problem] = []
    packaged = 0
    for index, pool in enumerate(listed):
        package = pool.get("pythonPackageSpec") if isinstance(pool, dict) else None
        if not isinstance(package, dict):
            continue
        packaged += 1
        where = f"{at}.{pool_path(index, single)}.pythonPackageSpec.pythonModule"
        problems += _module_problem(settings.trainer, root, package.get("pythonModule"), where)
    if not packaged:
        problems.append(Problem("trainer", f"is set, but no pool of {at} runs a Python package (a container "
                                "carries its code in the image); allowed: a pythonPackageSpec pool, or no trainer"))
    return problems


def _module_problem(trainer: Any, root: Path, module: Any, where: str) -> list[Problem]:
    if isinstance(module, str) and module and not trainer.has_module(root, module):
        return [Problem(where, f"{module!r} is not a module of trainer {trainer.path} (no {module.replace('.', '/')}"
                        ".py in it); allowed: a module of the trainer package, e.g. trainer.task")]
    return []


def _tpu_access_problems(base: StackSettings) -> list[Problem]:
    access = base.tpu_access
    if base.backend == "vertex" and access.grant == "true" and access.service_account is None:
        return [Problem(f"{NAMESPACE}:tpuAccess.serviceAccount", "required when tpuAccess.grant is true on the "
                        "vertex backend: the lookup (projects.getConfig) is an AI Platform Training method, shut "
                        "down on 2025-01-31; allowed: the TPU service account's email")]
    return []

