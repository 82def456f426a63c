"""Settings source: a stack file read offline (`gcp-training-jobs validate`, the plan)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, suggestion
from gcp_training_jobs.jobspec.io.documents import STACK_FILE, read_yaml
from gcp_training_jobs.resources.settings.decimals import lossy_decimals
from gcp_training_jobs.resources.settings.judge import StackSpecError, judge
from gcp_training_jobs.resources.settings.model import StackSettings
from gcp_training_jobs.resources.settings.secrets import secure_keys

#: Keys a Pulumi stack file may hold besides `config`.
STACK_FILE_KEYS = ("config", "encryptionsalt", "secretsprovider", "encryptedkey", "environment")


def find_project_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a Pulumi.yaml (how Pulumi finds its project)."""
    return next((folder for folder in (start, *start.parents) if project_file(folder) is not None), None)


def project_file(root: Path) -> Path | None:
    """The project's Pulumi.yaml (or Pulumi.yml)."""
    return next((p for p in (root / "Pulumi.yaml", root / "Pulumi.yml") if p.is_file()), None)


def project_name(root: Path) -> str | None:
    """The project's name (Pulumi.yaml's `name`): what `pulumi.get_project()` gives its program, part of every job's
    identity and its stack label; None without one. UnreadableError for a Pulumi.yaml that cannot be read."""
    project = project_file(root)
    settings = read_yaml(project) if project is not None else None
    name = settings.get("name") if isinstance(settings, dict) else None
    return name if isinstance(name, str) and name else None


def stacks_folder(root: Path) -> Path:
    """Where a project's stack files live, as Pulumi looks for them: the folder Pulumi.yaml names in
    `stackConfigDir` (this project: stacks), else the project's own folder. UnreadableError for a Pulumi.yaml
    that cannot be read."""
    project = project_file(root)
    settings = read_yaml(project) if project is not None else None
    folder = settings.get("stackConfigDir") if isinstance(settings, dict) else None
    return root / folder if isinstance(folder, str) and folder else root


def stack_file(folder: Path, stack: str) -> Path | None:
    """The stack file of `stack` in a stacks folder (Pulumi.NAME.yaml, or .yml), or None."""
    return next((p for p in (folder / f"Pulumi.{stack}.yaml", folder / f"Pulumi.{stack}.yml") if p.is_file()), None)


def stack_names(folder: Path) -> list[str]:
    """The stacks that have a file in a stacks folder."""
    if not folder.is_dir():
        return []
    found = (STACK_FILE.fullmatch(p.name) for p in sorted(folder.iterdir()))
    return [m.group(1) for m in found if m]


def load_stack_file(path: Path, data: Any | None = None, *, root: Path | None = None) -> StackSettings:
    """Judge a stack file (`stacks/Pulumi.NAME.yaml`); SpecError with every problem, each naming the file (a
    StackSpecError, holding the jobs that did judge: settings.guardrails.one_round).

    `data` is the file already parsed (with gcp_training_jobs.jobspec.io.documents.read_yaml, which keeps 1.10 as text);
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
    problems += [p.within(file=file) for p in lossy_decimals(path, config)]
    judged: StackSettings | None = None
    try:
        judged = judge({str(k): v for k, v in config.items()}, root, secret_keys=secure_keys(config))
    except SpecError as error:
        problems += [p.within(file=file) for p in error.problems]
        judged = error.judged if isinstance(error, StackSpecError) else None
    if problems:
        raise StackSpecError(problems, judged)
    assert judged is not None
    return judged
