"""Settings source: a stack file read offline (`python -m components validate`, the plan)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.jobspec.core.errors import SpecError
from components.jobspec.core.problems import Problem, allowed, suggestion
from components.jobspec.io.documents import read_yaml
from components.resources.settings.decimals import lossy_decimals
from components.resources.settings.judge import judge
from components.resources.settings.model import StackSettings
from components.resources.settings.secrets import secure_keys

#: Keys a Pulumi stack file may hold besides `config`.
STACK_FILE_KEYS = ("config", "encryptionsalt", "secretsprovider", "encryptedkey", "environment")


def find_project_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a Pulumi.yaml (how Pulumi finds its project)."""
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file() or (folder / "Pulumi.yml").is_file():
            return folder
    return None


def load_stack_file(path: Path, data: Any | None = None, *, root: Path | None = None) -> StackSettings:
    """Judge a stack file (`stacks/Pulumi.NAME.yaml`); SpecError with every problem, each naming the file.

    `data` is the file already parsed (with components.jobspec.io.documents.read_yaml, which keeps 1.10 as text);
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
    try:
        settings = judge({str(k): v for k, v in config.items()}, root, secret_keys=secure_keys(config))
    except SpecError as error:
        problems += [p.within(file=file) for p in error.problems]
    if problems:
        raise SpecError(problems)
    return settings
