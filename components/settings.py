"""A stack's configuration as one validated tree: the only module that reads `pulumi.Config` or a stack file.

The config lives in `stacks/Pulumi.NAME.yaml` under namespaced keys (`gcp-training-jobs:backend`,
`gcp:project`, ...). `load_stack_file` judges such a file offline (`python -m components validate`, the
plan); `from_pulumi_config` reads the same keys inside a Pulumi program. Both end in `_judge`, so a stack
file that validates is a stack `pulumi up` accepts, and both report every problem of the stack at once,
each naming the key (`gcp-training-jobs:jobs.resnet.trainingInput.region`), the value and what is allowed.

Importing this module imports neither pulumi nor googleapiclient (`validate` stays fast).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from components import catalog
from components.backends.base import JOB_NAME_MAX
from components.documents import read_yaml
from components.problems import Problem, SpecError, allowed, from_validation_error, suggestion
from components.spec import Job, TrainingInput, WireModel

#: The project's config namespace (the `name:` of Pulumi.yaml).
NAMESPACE = "gcp-training-jobs"
BACKENDS = ("ai-platform", "vertex")
DEFAULT_BACKEND: Literal["vertex"] = "vertex"
DEFAULT_REGION = "us-central1"
#: Stands for a value encrypted in the stack file (`secure: ...`): present, but not readable offline.
OPAQUE = "[secret]"
#: Keys a Pulumi stack file may hold besides `config`.
STACK_FILE_KEYS = ("config", "encryptionsalt", "secretsprovider", "encryptedkey", "environment")
#: Keys whose value is a mapping (Pulumi hands them to the program as JSON text).
OBJECT_KEYS = ("labels", "buckets", "tpuAccess", "jobs")
#: Stack-file keys of other namespaces that this project reads.
GCP_KEYS = ("gcp:project", "gcp:region")

#: A job's name is its Pulumi resource name, the stem of its job id and the folder of its job dir.
JOB_NAME = re.compile(r"[a-z][a-z0-9_-]*")
PROJECT_ID = re.compile(r"(?:[a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")
BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]")
GOOGLE_SERVICE_ACCOUNT = re.compile(r"[^@\s]+@[a-z0-9.-]+\.gserviceaccount\.com")
ENDPOINT = re.compile(r"https?://[^\s/]+(/\S*)?")
LOCATION = re.compile(r"[A-Za-z0-9-]+")
#: Where a job's args may name its job dir (the seed's `--model_dir=$OUTPUT_PATH`).
JOB_DIR_PLACEHOLDER = "${jobDir}"
#: Files that make a folder a Python project (built as it says) rather than a bare package.
PROJECT_FILES = ("setup.py", "pyproject.toml")


# --- Small validators ---------------------------------------------------------------------------


def _pattern(regex: re.Pattern[str], what: str) -> Any:
    """An AfterValidator: the text matches `regex` (opaque secrets pass: they cannot be judged offline)."""

    def check(value: str) -> str:
        if value != OPAQUE and not regex.fullmatch(value):
            raise ValueError(f"not {what}")
        return value

    return AfterValidator(check)


def _bucket_name(value: str) -> str:
    if value.startswith("gs://"):
        raise ValueError(f"give the bucket's name without gs:// (e.g. {value[5:].split('/')[0]!r})")
    if value != OPAQUE and (not BUCKET_NAME.fullmatch(value) or value.startswith("goog")):
        raise ValueError("not a bucket name; allowed: 3 to 63 lowercase letters, digits, -, _ and ., "
                         "starting and ending with a letter or digit")
    return value


def _grant(value: Any) -> Any:
    """tpuAccess.grant: auto, true or false (booleans as YAML or Pulumi write them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.lower() in ("auto", "true", "false"):
        return value.lower()
    raise ValueError("allowed: auto (grant when the backend is ai-platform and a job uses a TPU), true, false")


ProjectId = Annotated[str, _pattern(PROJECT_ID, "a Google Cloud project id (6 to 30 lowercase letters, "
                                                 "digits and hyphens, starting with a letter)")]
BucketName = Annotated[str, AfterValidator(_bucket_name)]
ServiceAccount = Annotated[str, _pattern(GOOGLE_SERVICE_ACCOUNT, "a Google service account email "
                                                                 "(NAME@DOMAIN.gserviceaccount.com)")]
Endpoint = Annotated[str, _pattern(ENDPOINT, "an http(s) URL, e.g. http://127.0.0.1:8085/")]
Location = Annotated[str, _pattern(LOCATION, "a Cloud Storage location, e.g. US-CENTRAL1 or US")]
Grant = Annotated[Literal["auto", "true", "false"], BeforeValidator(_grant)]


class SettingsModel(WireModel):
    """Base of the settings tree: camelCase keys as written in stack files, unknown keys refused (the same
    conventions as the job spec's models)."""


# --- The tree -----------------------------------------------------------------------------------


class BucketSettings(SettingsModel):
    """`gcp-training-jobs:buckets`: the staging and job-dir buckets, created unless named here."""

    staging: BucketName | None = None
    """An existing bucket for trainer packages; omitted: the stack creates one."""
    job_dir: BucketName | None = None
    """An existing bucket for job outputs and checkpoints; omitted: the stack creates one (versioned)."""
    location: Location | None = None
    """Where created buckets live; omitted: the stack's region (a region bucket next to the jobs)."""
    staging_retention_days: int = Field(default=30, ge=0, le=36500)
    """Created staging bucket: objects older than this are deleted (0: kept forever)."""
    noncurrent_retention_days: int = Field(default=30, ge=0, le=36500)
    """Created job-dir bucket: overwritten checkpoint versions are kept this long (0: forever)."""
    force_destroy: bool = False
    """Whether `pulumi destroy` may delete created buckets that still hold objects."""


class TpuAccessSettings(SettingsModel):
    """`gcp-training-jobs:tpuAccess`: granting the Cloud TPU service account roles/ml.serviceAgent (seed 000)."""

    grant: Grant = "auto"
    """auto: when the backend is ai-platform and a job uses a TPU; true: always; false: never."""
    service_account: ServiceAccount | None = None
    """The TPU service account, if known; omitted: looked up with projects.getConfig at apply."""


def trainer_layout(folder: Path) -> str | None:
    """How a trainer folder is built: "setup.py", "pyproject.toml", "package" (a bare package, for which a
    setup.py is generated as gcloud's --package-path does), or None when it is none of these."""
    for name in PROJECT_FILES:
        if (folder / name).is_file():
            return name
    if (folder / "__init__.py").is_file():
        return "package"
    return None


class TrainerSource(SettingsModel):
    """Trainer code in this repository, built into a source distribution and uploaded by the stack."""

    path: str
    """The folder, relative to the project root (where Pulumi.yaml is)."""

    @field_validator("path")
    @classmethod
    def _is_trainer(cls, value: str, info: ValidationInfo) -> str:
        root = _root_of(info)
        folder = root / value
        if not folder.is_dir():
            raise ValueError(f"no such folder under {root}; allowed: a folder with setup.py or pyproject.toml, "
                             "or a Python package folder (with __init__.py)")
        if trainer_layout(folder) is None:
            raise ValueError("has neither setup.py, pyproject.toml nor __init__.py; allowed: a Python project "
                             "folder or a Python package folder")
        return value

    def folder(self, root: Path) -> Path:
        return (root / self.path).resolve()

    def has_module(self, root: Path, module: str) -> bool:
        """Whether the dotted module is a file of the trainer (any package directory layout)."""
        folder = self.folder(root)
        parts = module.split(".")
        if trainer_layout(folder) == "package":  # the folder is the top package: NAME.sub.module
            if parts[0] != folder.name:
                return False
            inner = parts[1:]
            candidates = [folder.joinpath(*inner).with_suffix(".py"), folder.joinpath(*inner, "__init__.py")]
            return any(c.is_file() for c in candidates) if inner else True
        tail = "/".join(parts)
        return any(folder.glob(f"**/{tail}.py")) or any(folder.glob(f"**/{tail}/__init__.py"))


class JobSettings(SettingsModel):
    """One job of `gcp-training-jobs:jobs`: a gcloud config.yaml job plus where its code comes from."""

    training_input: dict[str, Any]
    """The seeds' trainingInput (judged by components.spec.load_job)."""
    labels: dict[str, str] | None = None
    """The job's labels (the stack's labels are added under them)."""
    trainer: TrainerSource | None = None
    """Trainer code built and uploaded by the stack; else trainingInput.packageUris or a container image."""
    wait_for_completion: bool = False
    """Whether `pulumi up` waits until the job ends."""
    wait_timeout_seconds: float | None = Field(default=None, gt=0)
    """How long `pulumi up` waits at most (default: 24 hours)."""

    _job: Job | None = PrivateAttr(default=None)

    @property
    def job(self) -> Job:
        """The validated job (spec model), with the stack's labels and region filled in."""
        if self._job is None:
            raise RuntimeError("job settings not judged yet; use load_stack_file or from_pulumi_config")
        return self._job


class StackSettings(SettingsModel):
    """The whole config of a stack, validated."""

    backend: Literal["ai-platform", "vertex"] = DEFAULT_BACKEND
    """The training API: vertex (Vertex AI custom jobs) or ai-platform (AI Platform Training v1, shut down
    by Google on 2025-01-31; for the emulator and exemptions)."""
    project: ProjectId
    """The Google Cloud project (gcp-training-jobs:project, else gcp:project)."""
    region: str = DEFAULT_REGION
    """Default region of the jobs and the buckets' location (gcp-training-jobs:region, else gcp:region)."""
    api_endpoint: Endpoint | None = None
    """Override of the training API endpoint (the loopback emulator); read by the providers' configure()."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels on every bucket and job."""
    buckets: BucketSettings = Field(default_factory=BucketSettings)
    tpu_access: TpuAccessSettings = Field(default_factory=TpuAccessSettings)
    enable_apis: bool = True
    """Whether the stack enables the Google APIs it needs (off when a platform team does that)."""
    jobs: dict[str, JobSettings] = Field(default_factory=dict)

    _root: Path = PrivateAttr(default_factory=Path.cwd)
    _secret_keys: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @property
    def root(self) -> Path:
        """The project root that trainer paths are relative to."""
        return self._root

    @property
    def secret_keys(self) -> frozenset[str]:
        """The keys (without namespace) whose value holds secrets: what is built from them stays secret."""
        return self._secret_keys

    @property
    def has_tpu_job(self) -> bool:
        from components.rules import uses_tpu

        return any(uses_tpu(job.job.training_input) for job in self.jobs.values())

    @property
    def grants_tpu_access(self) -> bool:
        """Whether the stack grants roles/ml.serviceAgent to the TPU service account (tpuAccess.grant)."""
        grant = self.tpu_access.grant
        if grant == "auto":
            return self.backend == "ai-platform" and self.has_tpu_job
        return grant == "true"

    @property
    def bucket_location(self) -> str:
        return (self.buckets.location or self.region).upper()

    def trainer_folders(self) -> dict[str, Path]:
        """Each distinct trainer path (as written) and its folder."""
        return {job.trainer.path: job.trainer.folder(self.root)
                for job in self.jobs.values() if job.trainer is not None}


def _root_of(info: ValidationInfo) -> Path:
    context = info.context if isinstance(info.context, dict) else {}
    root = context.get("root")
    return Path(root) if root is not None else Path.cwd()


# --- Reading --------------------------------------------------------------------------------------


def find_project_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a Pulumi.yaml (how Pulumi finds its project)."""
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file() or (folder / "Pulumi.yml").is_file():
            return folder
    return None


def load_stack_file(path: Path, data: Any | None = None, *, root: Path | None = None) -> StackSettings:
    """Judge a stack file (`stacks/Pulumi.NAME.yaml`); SpecError with every problem, each naming the file.

    `data` is the file already parsed (with components.documents.read_yaml, which keeps 1.10 as text);
    `root` is the project root trainer paths are relative to (default: the folder of the nearest
    Pulumi.yaml above the file, else the current directory). UnreadableError if the file cannot be read.
    """
    file = str(path)
    if data is None:
        data = read_yaml(path)
    root = root or find_project_root(path.resolve().parent) or Path.cwd()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError([Problem("", f"expected a mapping with a config: key, got {type(data).__name__}", file)])
    problems = [Problem(str(key), f"unknown stack file key{suggestion(str(key), STACK_FILE_KEYS)}; allowed: "
                        f"{allowed(STACK_FILE_KEYS)}", file) for key in data if key not in STACK_FILE_KEYS]
    config = data.get("config") or {}
    if not isinstance(config, dict):
        problems.append(Problem("config", f"expected a mapping of namespaced keys, got {type(config).__name__}",
                                file))
        config = {}
    problems += [p.within(file=file) for p in _lossy_decimals(path, config)]
    try:
        settings = _judge({str(k): v for k, v in config.items()}, root, secret_keys=_secure_keys(config))
    except SpecError as error:
        problems += [p.within(file=file) for p in error.problems]
    if problems:
        raise SpecError(problems)
    return settings


def from_pulumi_config(root: Path | None = None) -> StackSettings:
    """The stack's settings from `pulumi.Config` (inside a Pulumi program or under Pulumi's mocks).

    Invalid config raises pulumi.RunError, which Pulumi prints as a clean error (no traceback), one
    problem a line. `root`: the project root (default: the current directory, where Pulumi runs programs).
    """
    import pulumi
    from pulumi.runtime import config as runtime_config

    root = root or Path.cwd()
    config: dict[str, Any] = {}
    secret_keys: set[str] = set()
    for full_key in sorted(_config_keys(runtime_config)):
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE and full_key not in GCP_KEYS:
            continue
        raw = pulumi.Config(namespace).get(key)
        if raw is None:
            continue
        if namespace == NAMESPACE and runtime_config.is_config_secret(full_key):
            secret_keys.add(key)
        config[full_key] = _decode(key, raw) if namespace == NAMESPACE else raw
    try:
        return _judge(config, root, secret_keys=frozenset(secret_keys))
    except SpecError as error:
        stack_file = _stack_file(root, pulumi.get_stack())
        lines = [str(p.within(file=stack_file)) for p in error.problems]
        failure = pulumi.RunError(f"invalid configuration of stack {pulumi.get_stack()!r} "
                                  f"({len(lines)} problem{'s' if len(lines) != 1 else ''}):\n" + "\n".join(lines))
        failure.problems = error.problems  # type: ignore[attr-defined]
        raise failure from None


def _config_keys(runtime_config: Any) -> set[str]:
    """Every config key the program was given (Pulumi passes them all; there is no public listing)."""
    keys = set(runtime_config.CONFIG.get())
    keys |= set(runtime_config.get_config_env())
    return keys


def _stack_file(root: Path, stack: str) -> str | None:
    """The stack file's path relative to the root, for messages (stackConfigDir: stacks)."""
    for folder in ("stacks", "."):
        for suffix in (".yaml", ".yml"):
            candidate = root / folder / f"Pulumi.{stack}{suffix}"
            if candidate.is_file():
                return str(candidate.relative_to(root)) if folder != "." else candidate.name
    return None


def _decode(key: str, raw: str) -> Any:
    """Pulumi passes object values as JSON text; numbers in text fields (1.12) come back as text."""
    if raw == "":
        return None  # Pulumi.yaml declares optional strings with the default "" ("not set")
    if key not in OBJECT_KEYS:
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return raw  # not JSON: the model says what is expected
    for where, container, name in _text_fields(value, key):
        item = container[name]
        if isinstance(item, float):
            container[name] = _number_text(item)
        elif isinstance(item, int) and not isinstance(item, bool) and where.endswith("Version"):
            container[name] = str(item)
    return value


def _text_fields(value: Any, key: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, container, key) of the text fields of a config value that a number may be written in:
    versions, label values and arguments. Pulumi reads unquoted 1.10 in them as the number 1.1."""
    if key == "labels" and isinstance(value, dict):
        for name in value:
            yield f"labels.{name}", value, name
    if key != "jobs" or not isinstance(value, dict):
        return
    for job_name, job in value.items():
        if not isinstance(job, dict):
            continue
        base = f"jobs.{job_name}"
        labels = job.get("labels")
        if isinstance(labels, dict):
            for name in labels:
                yield f"{base}.labels.{name}", labels, name
        ti = job.get("trainingInput")
        if not isinstance(ti, dict):
            continue
        for name in ("runtimeVersion", "pythonVersion"):
            if name in ti:
                yield f"{base}.trainingInput.{name}", ti, name
        yield from _list_items(f"{base}.trainingInput.args", ti.get("args"))
        for role in catalog.ROLES:
            config = ti.get(f"{role}Config")
            if not isinstance(config, dict):
                continue
            if "tpuTfVersion" in config:
                yield f"{base}.trainingInput.{role}Config.tpuTfVersion", config, "tpuTfVersion"
            for name in ("containerCommand", "containerArgs"):
                yield from _list_items(f"{base}.trainingInput.{role}Config.{name}", config.get(name))


def _list_items(where: str, items: Any) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(items, list):
        for index in range(len(items)):
            yield f"{where}[{index}]", items, index


def _lossy_decimals(path: Path, config: dict[str, Any]) -> list[Problem]:
    """Unquoted decimals that Pulumi would change: its CLI reads `runtimeVersion: 1.10` as the number 1.1
    (in object values and top-level values alike, and `pulumi config set` writes 1.1 back).

    The offline reader keeps the text, so without this check `validate` would pass a stack that
    `pulumi up` runs on another version. Found by reading the file again with YAML's own number rules.
    """
    try:
        plain = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    plain_config = plain.get("config") if isinstance(plain, dict) else None
    if not isinstance(plain_config, dict):
        return []
    found: list[tuple[str, Any, Any]] = []
    for full, text in config.items():
        if str(full).startswith(f"{NAMESPACE}:") or full in GCP_KEYS:
            found.append((str(full), text, plain_config.get(full)))
    for key in OBJECT_KEYS:
        full = f"{NAMESPACE}:{key}"
        theirs = {where: container[name] for where, container, name in _text_fields(plain_config.get(full), key)}
        found += [(f"{NAMESPACE}:{where}", container[name], theirs.get(where))
                  for where, container, name in _text_fields(config.get(full), key)]
    return [Problem(where, f"{text} unquoted: Pulumi reads it as the number {_number_text(number)}; write it in "
                    f"quotes: \"{text}\"")
            for where, text, number in found
            if isinstance(text, str) and isinstance(number, float) and _number_text(number) != text]


def _number_text(number: float) -> str:
    return str(int(number)) if math.isfinite(number) and number.is_integer() else repr(number)


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def _secure_keys(config: Mapping[Any, Any]) -> frozenset[str]:
    """Keys of our namespace holding an encrypted value anywhere inside."""

    def holds(value: Any) -> bool:
        if _is_secure(value):
            return True
        if isinstance(value, dict):
            return any(holds(v) for v in value.values())
        if isinstance(value, list):
            return any(holds(v) for v in value)
        return False

    return frozenset(str(k).partition(":")[2] for k, v in config.items()
                     if str(k).startswith(f"{NAMESPACE}:") and holds(v))


def _opaque(value: Any) -> Any:
    """Encrypted values (`secure: v1:...`) replaced by OPAQUE: present, not judged."""
    if _is_secure(value):
        return OPAQUE
    if isinstance(value, dict):
        return {k: _opaque(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_opaque(v) for v in value]
    return value


# --- Judging --------------------------------------------------------------------------------------


def _judge(config: dict[str, Any], root: Path, secret_keys: frozenset[str] = frozenset()) -> StackSettings:
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
        if key in OBJECT_KEYS and _is_secure(value):
            problems.append(Problem(full_key, "is encrypted as a whole; allowed: a plain mapping (encrypt single "
                                    f"values in it: pulumi config set --secret --path '{key}.NAME')"))
            continue
        if key in ("region", "project") and value is None:
            continue
        ours[key] = _opaque(value)

    region_key, project_key = f"{NAMESPACE}:region", f"{NAMESPACE}:project"
    if ours.get("region") is None and config.get("gcp:region"):
        ours["region"], region_key = _opaque(config["gcp:region"]), "gcp:region"
    if ours.get("project") is None and config.get("gcp:project"):
        ours["project"], project_key = _opaque(config["gcp:project"]), "gcp:project"

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


def _label_problems(labels: dict[str, Any]) -> list[Problem]:
    """Label syntax, judged by the same rule as a job's labels."""
    from components.rules import Options, rule_labels

    if not labels or not all(isinstance(v, str) for v in labels.values()):
        return []
    return list(rule_labels(Job(labels=labels, training_input=TrainingInput()), Options()))


def _judge_job(name: str, raw: Any, *, root: Path, backend: str, region: str, region_key: str,
               stack_labels: dict[str, str]) -> tuple[JobSettings | None, list[Problem]]:
    """One job: its name, its settings shape, the spec rules (and Vertex's limits on vertex stacks).

    The parts are judged independently, so a bad trainer path does not hide a bad accelerator count.
    """
    from components.spec import load_job

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
    if stack_labels or labels:
        data["labels"] = {**stack_labels, **labels}
    job: Job | None = None
    spec_problems: list[Problem] = []
    try:
        job = load_job(data, default_region=region, package_supplied="trainer" in raw)
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
    from components.backends import render_body

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
