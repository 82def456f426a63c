"""The engine's property values (`PropertyValue`: secret, unknown, at any depth) read as the plain data the
TrainingJob provider takes, and its answers written back with each secret where it stands.

A value the engine marks secret, and any text of a job holding a credential (catalog.credentials.masked, the one
walk), goes back secret at its own path, not the whole input: `pulumi preview --diff` then shows which field of a job
changes and `[secret]` for the secret only. A value unknown at preview reads as the provider's UNKNOWN, as the Python
dynamic provider hands it over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi.provider.experimental.property_value import Computed, PropertyValue

from gcp_training_jobs.jobspec.catalog.credentials import masked
from gcp_training_jobs.resources.job_model.inputs import UNKNOWN

#: A path into a value: its keys and indexes from the top.
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Read:
    """Values read: the plain data, and the paths of those the engine marked secret."""

    data: dict[str, Any]
    secrets: frozenset[Path]


def read(values: Mapping[str, PropertyValue]) -> Read:
    """The plain data of the engine's values, and where its secrets stand."""
    secrets: set[Path] = set()
    return Read({key: _plain(value, (key,), secrets) for key, value in values.items()}, frozenset(secrets))


def _plain(value: PropertyValue, path: Path, secrets: set[Path]) -> Any:
    if value.is_secret:
        secrets.add(path)
    inner = value.value
    if isinstance(inner, Computed):
        return UNKNOWN
    if isinstance(inner, bool | str) or inner is None:
        return inner
    if isinstance(inner, float):
        return int(inner) if inner.is_integer() and abs(inner) < 2**53 else inner
    if isinstance(inner, Mapping):
        return {key: _plain(item, (*path, key), secrets) for key, item in inner.items()}
    if isinstance(inner, Sequence):
        return [_plain(item, (*path, i), secrets) for i, item in enumerate(inner) if isinstance(item, PropertyValue)]
    return inner  # an asset, an archive, a resource reference: never a job's; passed on as it is


class _Credential(str):
    """A text the credential walk found (made secret where it stands)."""


def write(data: Mapping[str, Any], secrets: frozenset[Path] = frozenset()) -> dict[str, PropertyValue]:
    """The engine's values of plain data: secret at each path of `secrets` and at each text holding a credential."""
    walked = masked(dict(data), conceal=_Credential).value
    return {key: _value(item, (key,), secrets) for key, item in walked.items()}


def _value(data: Any, path: Path, secrets: frozenset[Path]) -> PropertyValue:
    secret = path in secrets or isinstance(data, _Credential)
    if isinstance(data, str) and data == UNKNOWN:
        return PropertyValue.computed()
    if isinstance(data, Mapping):
        value = PropertyValue({str(k): _value(v, (*path, str(k)), secrets) for k, v in data.items()})
    elif isinstance(data, list | tuple):
        value = PropertyValue([_value(v, (*path, i), secrets) for i, v in enumerate(data)])
    elif isinstance(data, bool) or data is None:
        value = PropertyValue(data)
    elif isinstance(data, int | float):
        value = PropertyValue(float(data))
    elif isinstance(data, str):
        value = PropertyValue(str(data))
    else:
        value = PropertyValue(str(data))
    return value.with_secret(True) if secret else value


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """The property paths (`job.jobSpec.workerPoolSpecs[0].containerSpec.args`) where `new` differs from `old`,
    as deep as both are mappings or lists of one length; a whole list or value where they differ otherwise."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        found: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            found += changed_paths(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new, strict=True)) for p in changed_paths(a, b, f"{path}[{i}]")]
    if _same(old, new):
        return []
    return [path]


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    if isinstance(old, int | float) and isinstance(new, int | float):
        return float(old) == float(new)
    if isinstance(old, str) and isinstance(new, int | float) or isinstance(new, str) and isinstance(old, int | float):
        return str(old) == str(new)  # int64 as text or as a number (the API's and gcloud's) is one value
    return bool(old == new)
