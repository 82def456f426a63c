"""Secrets in stack config: which keys hold encrypted values, and the opaque stand-in used offline.

A key holding a secret anywhere inside (`pulumi config set --secret --path gcp-training-jobs:labels.owner`)
is a secret key as a whole: everything built from it stays secret (stack.py). Every walk here is iterative
and bounded (MAX_DEPTH, MAX_NODES, as for the files read): a hostile value costs a bounded amount of work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.io.documents import MAX_DEPTH, MAX_NODES

#: Stands for a value encrypted in the stack file (`secure: ...`): present, but not readable offline.
OPAQUE = "[secret]"
#: Keys of other namespaces that stand in for one of ours (and carry their secretness to it).
STAND_INS = {"gcp:project": "project", "gcp:region": "region"}


def is_secure(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def bounds_problem(value: Any) -> str | None:
    """Why a config value is too deep or too big to be read (None: it is within bounds)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        current, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return f"holds more than {MAX_NODES:,} values; allowed: at most {MAX_NODES:,}"
        if isinstance(current, dict | list):
            if depth > MAX_DEPTH:
                return f"nested more than {MAX_DEPTH} levels deep; allowed: at most {MAX_DEPTH}"
            items = current.values() if isinstance(current, dict) else current
            stack.extend((item, depth + 1) for item in items)
    return None


def holds_secret(value: Any) -> bool:
    """Whether an encrypted value is anywhere inside (a value past the bounds counts as one: it is never
    shown anyway)."""
    stack = [value]
    seen = 0
    while stack:
        current = stack.pop()
        seen += 1
        if seen > MAX_NODES or is_secure(current):
            return True
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return False


def secure_keys(config: Mapping[Any, Any]) -> frozenset[str]:
    """Keys of our namespace (and the gcp: keys standing in for ours) holding an encrypted value anywhere."""
    keys = set()
    for key, value in config.items():
        name = STAND_INS.get(str(key)) or (str(key).partition(":")[2] if str(key).startswith(f"{NAMESPACE}:") else "")
        if name and holds_secret(value):
            keys.add(name)
    return frozenset(keys)


def opaque(value: Any) -> Any:
    """Encrypted values (`secure: v1:...`) replaced by OPAQUE: present, not judged. Values deeper than
    MAX_DEPTH are kept as they are (the readers refuse them before this)."""
    return _opaque(value, 0)


def _opaque(value: Any, depth: int) -> Any:
    if is_secure(value):
        return OPAQUE
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: _opaque(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_opaque(v, depth + 1) for v in value]
    return value


def secure_paths(config: Mapping[Any, Any]) -> frozenset[str]:
    """Where the encrypted values of our namespace's keys are, as `key.sub.path` (`labels.owner`,
    `jobs.trial.labels.token`, `jobs.trial.jobSpec.workerPoolSpecs[0]...`): what a message must never print and
    where a secret must not go (a label). Bounded like every walk here."""
    found: set[str] = set()
    for key, value in config.items():
        name = str(key).partition(":")[2] if str(key).startswith(f"{NAMESPACE}:") else ""
        if not name:
            continue
        stack: list[tuple[str, Any]] = [(name, value)]
        seen = 0
        while stack and seen < MAX_NODES:
            path, current = stack.pop()
            seen += 1
            if is_secure(current):
                found.add(path)
            elif isinstance(current, dict):
                stack.extend((f"{path}.{k}", v) for k, v in current.items())
            elif isinstance(current, list):
                stack.extend((f"{path}[{i}]", v) for i, v in enumerate(current))
    return frozenset(found)


def is_label_path(path: str) -> bool:
    """Whether a secure path is a label's value: the stack's (`labels.K`) or a job's (`jobs.NAME.labels.K`)."""
    parts = path.split(".")
    return (len(parts) == 2 and parts[0] == "labels") or (len(parts) == 4 and parts[0] == "jobs"
                                                          and parts[2] == "labels")


def value_at(value: Any, path: str) -> Any:
    """The value at a `sub.path[i]` path below a key's value (None where there is none)."""
    current = value
    for part in path.replace("[", ".[").split(".") if path else []:
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            current = current[index] if isinstance(current, list) and index < len(current) else None
        else:
            current = current.get(part) if isinstance(current, dict) else None
    return current


def redact(text: str, secrets: frozenset[str]) -> str:
    """`text` with every secret value (and its repr) in it replaced by OPAQUE; values under 3 characters are left
    (they would hide everything)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(repr(secret), OPAQUE).replace(secret, OPAQUE)
    return text
