"""Google discovery documents (ml v1, aiplatform v1) and a JSON checker driven by their schemas.

The documents are the ones googleapiclient ships as package data (`static_discovery=True`), so the
checker, the loopback emulator and the real client agree on field names and types without network.
`validate_body` answers the question the real API answers with 400 INVALID_ARGUMENT: does this JSON
value fit the named schema (no unknown fields, right JSON types, int64 as strings, known enum values,
well-formed durations)? It is deliberately a little stricter than Google's JSON parser: only the
lowerCamel JSON names are accepted (the real parser also takes proto snake_case names), and integral
floats such as 8.0 are refused for integer fields.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
import re
from typing import Any

from gcp_training_jobs.emulator import enums

__all__ = ["APIS", "get_schema", "load_document", "output_only_fields", "validate_body"]

#: API name -> discovery document file shipped by googleapiclient.
APIS: dict[str, str] = {"ml": "ml.v1.json", "aiplatform": "aiplatform.v1.json", "logging": "logging.v2.json",
                        "compute": "compute.v1.json"}

_INT64_RE = re.compile(r"^-?[0-9]+$")
_UINT64_RE = re.compile(r"^[0-9]+$")
#: google-duration: seconds with up to nine fractional digits, suffix "s" (e.g. "3600s", "1.5s").
_DURATION_RE = re.compile(r"^-?[0-9]+(\.[0-9]{1,9})?s$")
_DATETIME_RE = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
_BYTES_RE = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
_RANGES: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_SPECIAL_FLOATS = {"NaN", "Infinity", "-Infinity"}


@functools.lru_cache(maxsize=8)
def load_document(api: str) -> dict[str, Any]:
    """The v1 discovery document of `api` ("ml" or "aiplatform"), parsed once and cached.

    The returned dict is shared between callers: treat it as read-only.
    """
    try:
        filename = APIS[api]
    except KeyError:
        raise ValueError(f"unknown API {api!r}; expected one of {sorted(APIS)}") from None
    resource = importlib.resources.files("googleapiclient.discovery_cache").joinpath("documents", filename)
    document: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return document


def get_schema(api: str, name: str) -> dict[str, Any]:
    """One named schema of an API's discovery document (KeyError if it does not exist)."""
    schemas: dict[str, Any] = load_document(api)["schemas"]
    if name not in schemas:
        raise KeyError(f"schema {name!r} not found in {api} v1 discovery document")
    found: dict[str, Any] = schemas[name]
    return found


def output_only_fields(api: str, schema: str) -> frozenset[str]:
    """Top-level properties of a schema that the server sets (readOnly or documented "Output only.")."""
    properties: dict[str, Any] = get_schema(api, schema).get("properties", {})
    return frozenset(name for name, prop in properties.items() if _output_only(prop))


def validate_body(
    api: str,
    schema: str,
    body: Any,
    *,
    strict_int64: bool = False,
    reject_output_only: bool = False,
    enum_numbers: bool = False,
) -> list[str]:
    """Check `body` against the discovery schema named `schema` of `api`; return problems (empty = valid).

    Each problem starts with the JSON path of the offending value (e.g.
    `trainingInput.masterConfig.foo: unknown field "foo"`; list items as `workerPoolSpecs[0]`).
    int64/uint64 values may be digit strings or JSON integers, or only strings with `strict_int64`
    (the JSON mapping the project promises to send). `reject_output_only` also refuses fields the
    document marks read-only / "Output only." (the real API silently ignores them). JSON null means
    "field not set" and is accepted for fields, as Google's parser does. `enum_numbers` also accepts an enum
    as its proto number where `enums` knows the numbers (as the real API does; the discovery document lists
    names only).
    """
    checker = _Checker(load_document(api)["schemas"], strict_int64, reject_output_only, enum_numbers)
    checker.check_ref(schema, body, "")
    return checker.problems


class _Checker:
    """Walks a JSON value alongside a discovery schema, collecting problems."""

    def __init__(self, schemas: dict[str, Any], strict_int64: bool, reject_output_only: bool,
                 enum_numbers: bool = False) -> None:
        self.schemas = schemas
        self.strict_int64 = strict_int64
        self.reject_output_only = reject_output_only
        self.enum_numbers = enum_numbers
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{path or '<root>'}: {message}")

    def check_ref(self, name: str, value: Any, path: str) -> None:
        target = self.schemas.get(name)
        if target is None:
            raise KeyError(f"schema {name!r} not found in discovery document")
        self.check(target, value, path)

    def check(self, spec: dict[str, Any], value: Any, path: str) -> None:
        if "$ref" in spec:
            self.check_ref(spec["$ref"], value, path)
            return
        kind = spec.get("type")
        if kind == "any" or kind is None:
            return
        if kind == "object":
            self.check_object(spec, value, path)
        elif kind == "array":
            if not isinstance(value, list):
                self.add(path, f"expected an array, got {_json_type(value)}")
                return
            for index, item in enumerate(value):
                item_path = f"{path}[{index}]"
                if item is None:
                    self.add(item_path, "null is not allowed in a list")
                else:
                    self.check(spec.get("items", {}), item, item_path)
        elif kind == "string":
            self.check_string(spec, value, path)
        elif kind == "integer":
            self.check_integer(spec.get("format", "int32"), value, path)
        elif kind == "number":
            if isinstance(value, bool) or not (
                isinstance(value, (int, float)) or (isinstance(value, str) and value in _SPECIAL_FLOATS)
            ):
                self.add(path, f"expected a number, got {_json_type(value)}")
            elif isinstance(value, float) and not math.isfinite(value):
                self.add(path, "non-finite numbers must be written as \"NaN\"/\"Infinity\" strings")
        elif kind == "boolean":
            if not isinstance(value, bool):
                self.add(path, f"expected a boolean, got {_json_type(value)}")
        else:  # pragma: no cover - the shipped documents use only the kinds above
            self.add(path, f"unsupported schema type {kind!r}")

    def check_object(self, spec: dict[str, Any], value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.add(path, f"expected an object, got {_json_type(value)}")
            return
        properties: dict[str, Any] = spec.get("properties", {})
        extra = spec.get("additionalProperties")
        for key, item in value.items():
            item_path = f"{path}.{key}" if path else str(key)
            if key in properties:
                prop = properties[key]
                if self.reject_output_only and _output_only(prop):
                    self.add(item_path, f'field "{key}" is output only')
                    continue
                known = enums.numbers(str(spec.get("id", "")), key) if self.enum_numbers else None
                if known is not None and isinstance(item, int) and not isinstance(item, bool):
                    if item not in known.values():
                        listed = ", ".join(f"{number} ({name})" for name, number in known.items())
                        self.add(item_path, f"invalid value {item} (expected one of: {listed})")
                elif item is not None:
                    self.check(prop, item, item_path)
            elif isinstance(extra, dict):
                if item is None and extra.get("type") != "any":
                    self.add(item_path, "null is not allowed as a map value")
                else:
                    self.check(extra, item, item_path)
            else:
                self.add(item_path, f'unknown field "{key}"')

    def check_string(self, spec: dict[str, Any], value: Any, path: str) -> None:
        fmt = spec.get("format")
        if fmt in ("int64", "uint64"):
            self.check_integer(fmt, value, path)
            return
        if not isinstance(value, str):
            self.add(path, f"expected a string, got {_json_type(value)}")
            return
        if "enum" in spec and value not in spec["enum"]:
            allowed = ", ".join(spec["enum"])
            self.add(path, f'invalid value "{value}" (expected one of: {allowed})')
        elif fmt == "google-duration" and not _DURATION_RE.match(value):
            self.add(path, f'invalid duration "{value}" (expected seconds with suffix "s", e.g. "3600s")')
        elif fmt == "google-datetime" and not _DATETIME_RE.match(value):
            self.add(path, f'invalid timestamp "{value}" (expected RFC 3339, e.g. "2024-01-01T00:00:00Z")')
        elif fmt == "byte" and not _BYTES_RE.match(value):
            self.add(path, "invalid base64 value")

    def check_integer(self, fmt: str, value: Any, path: str) -> None:
        low, high = _RANGES.get(fmt, _RANGES["int64"])
        wide = fmt in ("int64", "uint64")
        if isinstance(value, str) and wide:
            pattern = _UINT64_RE if fmt == "uint64" else _INT64_RE
            if not pattern.match(value):
                self.add(path, f'invalid {fmt} value "{value}" (expected a string of digits)')
                return
            number = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            if wide and self.strict_int64:
                self.add(path, f'{fmt} must be sent as a JSON string (e.g. "{value}"), got integer {value}')
                return
            number = value
        else:
            expected = "a string of digits" if wide else "an integer"
            self.add(path, f"expected {fmt} as {expected}, got {_json_type(value)}")
            return
        if not low <= number <= high:
            self.add(path, f"value {number} out of range for {fmt}")


def _output_only(prop: dict[str, Any]) -> bool:
    """True for fields the server sets: readOnly, or documented as "Output only."."""
    return bool(prop.get("readOnly")) or str(prop.get("description", "")).startswith("Output only.")


def _json_type(value: Any) -> str:
    """JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
