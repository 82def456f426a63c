"""Secrets in stack config: which keys hold encrypted values, and the opaque stand-in used offline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.jobspec.names import NAMESPACE

#: Stands for a value encrypted in the stack file (`secure: ...`): present, but not readable offline.
OPAQUE = "[secret]"


def is_secure(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def secure_keys(config: Mapping[Any, Any]) -> frozenset[str]:
    """Keys of our namespace holding an encrypted value anywhere inside."""

    def holds(value: Any) -> bool:
        if is_secure(value):
            return True
        if isinstance(value, dict):
            return any(holds(v) for v in value.values())
        if isinstance(value, list):
            return any(holds(v) for v in value)
        return False

    return frozenset(str(k).partition(":")[2] for k, v in config.items()
                     if str(k).startswith(f"{NAMESPACE}:") and holds(v))


def opaque(value: Any) -> Any:
    """Encrypted values (`secure: v1:...`) replaced by OPAQUE: present, not judged."""
    if is_secure(value):
        return OPAQUE
    if isinstance(value, dict):
        return {k: opaque(v) for k, v in value.items()}
    if isinstance(value, list):
        return [opaque(v) for v in value]
    return value
