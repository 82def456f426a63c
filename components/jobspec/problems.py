"""Validation problems: one per bad value, each naming its field path, what is wrong and what is allowed.

Both the spec models and the stack settings report through these types, so the command line, the plan
and the Pulumi provider print the same lines.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: `path` is the dotted wire-name path, e.g. trainingInput.region."""

    path: str
    message: str
    file: str | None = None

    def __str__(self) -> str:
        where = f"{printable(self.file)}: " if self.file else ""
        text = f"{self.path}: {self.message}" if self.path else self.message
        return where + printable(text)

    def within(self, prefix: str = "", file: str | None = None) -> Problem:
        """The same problem seen from an enclosing document (a stack file holding the job)."""
        path = ".".join(p for p in (prefix, self.path) if p)
        return Problem(path, self.message, file if file is not None else self.file)


def join_path(*parts: str | int) -> str:
    """`a`, `b`, 0 -> `a.b[0]`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "":
            out = f"{out}.{part}" if out else part
    return out


def allowed(values: Iterable[object]) -> str:
    """Render a list of allowed values the same way everywhere."""
    return ", ".join(str(v) for v in values) or "none"


def suggestion(key: str, known: Iterable[str]) -> str:
    """` (did you mean X?)` for the closest known name, or nothing when none is close."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Wire name (alias) and Python name of every field -> the wire name."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        wire = info.alias or name
        names[wire] = wire
        names[name] = wire
    return names


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """Follow a pydantic error location through nested models (lists and dicts included)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        names = _field_names(current)
        if part not in names:
            return None
        wire = names[part]
        field = next(f for n, f in current.model_fields.items() if (f.alias or n) == wire)
        current = _unwrap(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    """The model class inside Optional[...], list[...] or dict[str, ...], if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _unwrap(arg)
        if found is not None:
            return found
    return None


def _wire_loc(model: type[BaseModel], loc: Sequence[str | int]) -> list[str | int]:
    """Translate Python field names in a location to wire names."""
    out: list[str | int] = []
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            out.append(part)
            continue
        names = _field_names(current)
        wire = names.get(part, part)
        out.append(wire)
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == wire), None)
        current = _unwrap(field.annotation) if field is not None else None
    return out


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxdict, _SHORT.maxlist, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60


def _describe(value: Any) -> str:
    """A value as one short line, bounded before it becomes text (a huge or deeply nested value costs no
    more than a small one): strings quoted, numbers and booleans as written, containers abridged."""
    if isinstance(value, int) and value.bit_length() > 192:
        return "a number of more than 57 digits"
    text = _SHORT.repr(value) if isinstance(value, (str, dict, list, tuple, set)) else str(value)[:61]
    return text if len(text) <= 60 else text[:57] + "..."


def printable(text: str) -> str:
    """Text with control characters escaped (a key or value from a file is printed on one line, as data)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text) if not text.isprintable() else text


def from_validation_error(error: ValidationError, model: type[BaseModel]) -> list[Problem]:
    """One Problem per pydantic error, with wire names and, for unknown keys, the closest known name."""
    problems: list[Problem] = []
    for err in error.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        kind = err["type"]
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            key = str(loc[-1])
            known = sorted({info.alias or n for n, info in parent.model_fields.items()}) if parent else []
            message = f"unknown field {key!r}{suggestion(key, known)}; allowed: {allowed(known)}"
        elif kind == "missing":
            message = "required field is missing"
        else:
            message = f"{_describe(err.get('input'))}: {err['msg']}"
        problems.append(Problem(join_path(*_wire_loc(model, loc)), message))
    return problems
