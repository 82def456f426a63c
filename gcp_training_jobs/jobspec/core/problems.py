"""Validation problems: one per bad value, each naming its field path, what is wrong and what is allowed.

Both the spec models and the stack settings report through these types, so the command line, the plan
and the Pulumi provider print the same lines.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
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
        return dataclasses.replace(self, path=path, file=file if file is not None else self.file)

    def warning(self) -> str:
        """The problem as a warning line, which does not stop the job: `FILE: warning: PATH: message` (what
        `validate`, `render` and `plan` print on stderr)."""
        where = f"{printable(self.file)}: " if self.file else ""
        text = f"{self.path}: {self.message}" if self.path else self.message
        return f"{where}warning: {printable(text)}"


@dataclass(frozen=True)
class Notice(Problem):
    """What a rule cannot judge and says so, without stopping the job: a value newer than the catalog's dated list
    (a prebuilt image of a framework version published after the page was read). A known fact that is wrong is a
    Problem; what the catalog cannot know is a Notice naming the catalog's date. The rules return both; the one
    pass (load.Judged) keeps the Notices as its `warnings`."""


@dataclass(frozen=True)
class CredentialWarning(Problem):
    """A text of a job that holds what looks like a credential (rules.identity.credential_warnings): its field and the
    kind named, never the value. A warning, which stops nothing; the review shows these where the job is judged.
    `kind`: what the credential is (`a Hugging Face access token`)."""

    kind: str = ""


def notices(problems: Iterable[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(the problems that stop the job, the Notices), each in order."""
    found = list(problems)
    return [p for p in found if not isinstance(p, Notice)], [p for p in found if isinstance(p, Notice)]


def vertex_only(path: str, *, tuning: bool = False, backend_at: str = "backend") -> Problem:
    """A job in Vertex AI's vocabulary (a CustomJobSpec, or a tuning config when `tuning`) given backend
    ai-platform, which cannot run it; `backend_at` names where the backend is set (`--backend`, a stack key)."""
    what = "a tuning config (studySpec, trialJobSpec)" if tuning else "a CustomJobSpec"
    ml = "a job with trainingInput and hyperparameters" if tuning else "a job with trainingInput"
    return Problem(path, f"{what} is Vertex AI's vocabulary and runs on Vertex AI only; allowed: {backend_at} "
                   f"vertex, or {ml} for ai-platform")


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
    """` (did you mean X?)` for the closest known name, or nothing when none is close. A snake_case key whose
    camelCase form is known names that form (gcloud and the JSON API take camelCase keys only)."""
    names = list(known)
    if "_" in key:
        head, *rest = key.split("_")
        camel = head + "".join(part[:1].upper() + part[1:] for part in rest)
        if camel in names and camel != key:
            return f" (did you mean {camel}? keys are camelCase)"
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if not close and len(key) >= 4:  # a name cut short: SPECIFIC for SPECIFIC_RESERVATION
        close = [n for n in names if n.lower().startswith(key.lower())][:2]
        close = close if len(close) == 1 else []
    return f" (did you mean {close[0]}?)" if close else ""


def allowed_some(values: Iterable[object], limit: int = 12) -> str:
    """`allowed` for a list that may be long: at most `limit` values, then how many there are in all."""
    shown = [str(v) for v in values]
    if len(shown) <= limit:
        return allowed(shown)
    return f"{', '.join(shown[:limit])}, ... ({len(shown)} in all)"


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


def _belongs_under(parent: type[BaseModel], key: str) -> str | None:
    """The one field of `parent` whose block (a nested model) has a field named `key`, by its wire name; None when
    no block or several have it."""
    homes = [wire for wire in sorted({info.alias or n for n, info in parent.model_fields.items()})
             if (child := _model_at(parent, [wire])) is not None and key in _field_names(child)]
    return homes[0] if len(homes) == 1 else None


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
    if isinstance(value, str) and "@" in value and "://" in value:
        value = without_userinfo(value)
    text = _SHORT.repr(value) if isinstance(value, (str, dict, list, tuple, set)) else str(value)[:61]
    return text if len(text) <= 60 else text[:57] + "..."


#: A URL's user name and password (`https://USER:PASSWORD@host`): never printed.
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")


def without_userinfo(text: str) -> str:
    """`text` with each URL's user name and password left out (`https://host/`), as every message prints a URL."""
    return _USERINFO.sub("", text)


def printable(text: str) -> str:
    """Text with control characters escaped (a key or value from a file is printed on one line, as data)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text) if not text.isprintable() else text


def _kind(value: Any) -> str:
    """What a YAML value is, in the words a user knows."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None:
        return "empty (null)"
    return f"a {type(value).__name__}"


def _fields_of(model: type[BaseModel] | None, limit: int = 8) -> str:
    if model is None:
        return "a mapping of its fields"
    names = [info.alias or name for name, info in model.model_fields.items()]
    shown = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
    return f"a mapping of its fields ({shown})"


_QUOTED = re.compile(r"'([^']*)'")

#: pydantic's bound and length errors: what is wrong, what is allowed, and the context key of the bound.
_BOUNDS = {
    "greater_than_equal": ("too small", "{} or more", "ge"),
    "greater_than": ("too small", "more than {}", "gt"),
    "less_than_equal": ("too large", "at most {}", "le"),
    "less_than": ("too large", "less than {}", "lt"),
}
_LENGTHS = {
    "too_short": ("too few items", "at least {} items", "min_length"),
    "too_long": ("too many items", "at most {} items", "max_length"),
    "string_too_short": ("too short", "at least {} characters", "min_length"),
    "string_too_long": ("too long", "at most {} characters", "max_length"),
}


def _expected(ctx: dict[str, Any]) -> list[str]:
    """The values a literal or enum error names ("'a', 'b' or 'c'" -> [a, b, c])."""
    return _QUOTED.findall(str(ctx.get("expected", "")))


def _explain(err: Any, model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """One pydantic error as "what is wrong; allowed: what", in this project's words (never pydantic's)."""
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "model_attributes_type", "dataclass_type"):
        return f"{_kind(value)}, not a mapping; allowed: {_fields_of(_model_at(model, loc))}"
    if kind in ("dict_type", "mapping_type"):
        return f"{_kind(value)}, not a mapping; allowed: a mapping of KEY: VALUE lines"
    if kind in ("list_type", "tuple_type", "set_type", "iterable_type"):
        return f"{_kind(value)}, not a list; allowed: a list ([a, b], or one '- item' line per entry)"
    if kind in ("string_type", "string_unicode", "string_sub_type"):
        quoted = f" (quote it: \"{value}\")" if isinstance(value, (bool, int, float)) else ""
        return f"{_kind(value)}, not text; allowed: text{quoted}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{_kind(value)}, not a whole number; allowed: a whole number (e.g. 4)"
    if kind == "int_parsing_size":
        return "too large a number; allowed: a whole number that fits 64 bits"
    if kind in ("float_parsing", "float_type", "decimal_parsing", "decimal_type"):
        return f"{_kind(value)}, not a number; allowed: a number (e.g. 0.01)"
    if kind == "finite_number":
        return "not a finite number; allowed: a finite number (e.g. 0.01)"
    if kind in ("bool_parsing", "bool_type"):
        return f"{_kind(value)}, not a boolean; allowed: true or false"
    if kind in ("literal_error", "enum"):
        options = _expected(ctx)
        hint = suggestion(str(value), options) if isinstance(value, str) else ""
        return f"not one of the allowed values{hint}; allowed: {allowed(options) or ctx.get('expected')}"
    if kind in _BOUNDS:
        what, rule, key = _BOUNDS[kind]
        bound = ctx.get(key)
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        return f"{what}; allowed: {rule.format(bound)}"
    if kind in _LENGTHS:
        what, rule, key = _LENGTHS[kind]
        return f"{what}; allowed: {rule.format(ctx.get(key))}"
    if kind == "string_pattern_mismatch":
        return f"does not match the expected form; allowed: text matching {ctx.get('pattern')}"
    if kind in ("value_error", "assertion_error"):
        # Our own validators' messages ("what is wrong; allowed: ..."), without pydantic's prefix.
        return str(ctx.get("error") or err["msg"]).removeprefix("Assertion failed, ")
    text = str(err["msg"])  # a kind not reachable from YAML today: keep the substance, not the phrasing
    return f"not allowed; allowed: {text.removeprefix('Input should be ')}"


def from_validation_error(error: ValidationError, model: type[BaseModel]) -> list[Problem]:
    """One Problem per pydantic error, with wire names, the value given and what is allowed (in this project's
    words: pydantic's own messages never reach the user); for unknown keys, the closest known name."""
    problems: list[Problem] = []
    for err in error.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        kind = err["type"]
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            key = str(loc[-1])
            known = sorted({info.alias or n for n, info in parent.model_fields.items()}) if parent else []
            where = _wire_loc(model, loc[:-1])
            home = _belongs_under(parent, key) if parent else None
            if home is not None:  # a key of a block beside it: `params` next to `hyperparameters`
                message = (f"unknown field {key!r} here: it belongs inside {home}; allowed: "
                           f"{join_path(*where, home, key)}")
            else:
                message = f"unknown field {key!r}{suggestion(key, known)}; allowed: {allowed(known)}"
            problems.append(Problem(join_path(*where, key), message))
            continue
        elif kind == "missing" or getattr((err.get("ctx") or {}).get("error"), "conceals_value", False):
            message = _explain(err, model, loc)
        else:
            message = f"{_describe(err.get('input'))}: {_explain(err, model, loc)}"
        problems.append(Problem(join_path(*_wire_loc(model, loc)), message))
    return problems


def collapse_repeated(problems: Iterable[Problem]) -> list[Problem]:
    """Problems with the same message (in the same file) reported once, in first-seen order.

    A fact wrong for every pool (say, a runtime with no prebuilt container) is one problem, not one per pool:
    the paths are merged, pool indices listed together (`workerPoolSpecs[0,1,2].x`), other paths joined with
    ", ". A message that names a pool's own value differs per pool and is kept per pool.
    """
    groups: dict[tuple[type[Problem], str | None, str], list[str]] = {}
    for problem in problems:
        paths = groups.setdefault((type(problem), problem.file, problem.message), [])
        if problem.path not in paths:
            paths.append(problem.path)
    return [kind(_merge_paths(paths), message, file) for (kind, file, message), paths in groups.items()]


_INDEX = re.compile(r"\[(\d+)\]")


def _merge_paths(paths: list[str]) -> str:
    """`a[0].b`, `a[2].b` -> `a[0,2].b`; paths that differ in more than one index are joined with ", "."""
    if len(paths) == 1:
        return paths[0]
    shapes = {_INDEX.sub("[]", p) for p in paths}
    if len(shapes) == 1:
        indices = [_INDEX.findall(p) for p in paths]
        differing = [i for i in range(len(indices[0])) if len({ix[i] for ix in indices}) > 1]
        if len(differing) == 1:
            at = differing[0]
            merged = ",".join(dict.fromkeys(ix[at] for ix in indices))
            parts = _INDEX.split(paths[0])  # text, index, text, index, ...
            parts[2 * at + 1] = merged
            return "".join(f"[{part}]" if i % 2 else part for i, part in enumerate(parts))
    return ", ".join(paths)
