"""Reading the YAML files users write: gcloud job configs (config.yaml) and Pulumi stack files.

YAML 1.1 reads `runtimeVersion: 1.10` as the float 1.1; the loader here keeps decimals as the text the
user wrote (numeric fields accept the text), so versions survive unquoted, as they do for gcloud users.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

STACK_FILE = re.compile(r"Pulumi\.([A-Za-z0-9_.-]+)\.ya?ml")
PROJECT_FILE = re.compile(r"Pulumi\.ya?ml")


class UnreadableError(Exception):
    """A file that cannot be read or parsed at all (exit code 2 on the command line)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader without the float resolver: 1.10 stays "1.10"."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:float"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _no_duplicate_keys(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicate_keys)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text; UnreadableError names the file, line and column on failure."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise UnreadableError(f"{source}{where}: not valid YAML: {problem}") from None


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UnreadableError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableError(f"{path}: cannot be read: {error}") from None
    return parse_yaml(text, str(path))


@dataclass(frozen=True)
class Document:
    """One input file and what kind it is: a job config or a stack file."""

    path: Path
    kind: str  # "job" | "stack"
    data: Any

    @property
    def stack_name(self) -> str | None:
        match = STACK_FILE.fullmatch(self.path.name)
        return match.group(1) if match else None


def classify(path: Path, data: Any) -> str:
    """A `Pulumi.NAME.yaml` or a mapping with a top-level `config:` is a stack file; else a job."""
    if STACK_FILE.fullmatch(path.name):
        return "stack"
    if isinstance(data, dict) and "config" in data and "trainingInput" not in data:
        return "stack"
    return "job"


def expand(paths: list[str]) -> Iterator[Path]:
    """Files named, and the YAML files inside folders named (sorted; Pulumi.yaml itself skipped)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.suffix in (".yaml", ".yml") and child.is_file():
                    if PROJECT_FILE.fullmatch(child.name):
                        continue
                    yield child
        else:
            yield path


def load(path: Path) -> Document:
    data = read_yaml(path)
    return Document(path, classify(path, data), data)
