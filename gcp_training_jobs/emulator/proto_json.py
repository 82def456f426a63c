"""The proto3 JSON mapping as Vertex AI reads and writes it, driven by the discovery schemas and `enums`:

- enums may arrive as names or as numbers (the SDK's REST transport sends numbers); the emulator keeps names;
- scalars with their default value ("" / 0 / "0" / false / the enum's number-0 name) and empty lists and maps
  are unset, exactly like absent fields (the SDK's `CustomJob.to_json()` writes `"tpuTopology": ""` and
  `"persistentResourceId": ""`); messages ({}) and the wrapper fields of `enums.PRESENCE_FIELDS` stay set;
- answers carry enum numbers when the request asks `$alt=json;enum-encoding=int` (what the SDK always asks);
- int64 fields are answered as JSON strings, as Google sends them (a request may send either).

A created job keeps the user's fields as received (enum numbers turned into names): the real service would
re-serialise them and drop default values, the emulator echoes them, a documented simplification. Its checks
judge the `unset_defaults` view, which is what the real service sees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gcp_training_jobs.emulator import discovery, enums

#: Returned by a leaf function to drop the field.
_DROP = object()
#: String formats that are messages in the proto (Duration, Timestamp, FieldMask): never a default scalar.
_MESSAGE_STRINGS = frozenset({"google-duration", "google-datetime", "google-fieldmask"})

Leaf = Callable[[str, str | None, dict[str, Any], Any], Any]


def wants_int_enums(query: Mapping[str, Any]) -> bool:
    """Whether a request asks for enums as numbers (`$alt=json;enum-encoding=int`, or `alt=`)."""
    for key in ("$alt", "alt"):
        values = query.get(key)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str) and "enum-encoding=int" in value.replace(" ", ""):
                return True
    return False


def enum_names(api: str, schema: str, body: Any) -> Any:
    """A copy of `body` with every enum sent as a number written as its name."""

    def leaf(owner: str, field: str | None, spec: dict[str, Any], value: Any) -> Any:
        known = enums.numbers(owner, field) if field else None
        if known is not None and _is_int(value):
            return next((name for name, number in known.items() if number == value), value)
        return value

    return _walk(api, schema, body, leaf, prune=False)


def enum_numbers(api: str, schema: str, body: Any) -> Any:
    """A copy of an answer with every enum name that has a known number written as that number."""

    def leaf(owner: str, field: str | None, spec: dict[str, Any], value: Any) -> Any:
        known = enums.numbers(owner, field) if field else None
        return known.get(value, value) if known is not None and isinstance(value, str) else value

    return _walk(api, schema, body, leaf, prune=False)


def int64_strings(api: str, schema: str, body: Any) -> Any:
    """A copy of an answer with every int64 / uint64 field (the discovery document's `format`) written as a JSON
    string, as Google's JSON mapping sends them (`"replicaCount": "1"`), whether it was received as a number or as
    text."""

    def leaf(owner: str, field: str | None, spec: dict[str, Any], value: Any) -> Any:
        if spec.get("type") == "string" and spec.get("format") in ("int64", "uint64") and _is_int(value):
            return str(value)
        return value

    return _walk(api, schema, body, leaf, prune=False)


def unset_defaults(api: str, schema: str, body: Any) -> Any:
    """A copy of `body` as the real service reads it: default-valued scalars, the number-0 enum value and empty
    lists and maps removed (enums already names, see `enum_names`)."""

    def leaf(owner: str, field: str | None, spec: dict[str, Any], value: Any) -> Any:
        if field is None or (owner, field) in enums.PRESENCE_FIELDS:
            return value
        known = enums.numbers(owner, field)
        if known is not None and isinstance(value, str) and known.get(value) == 0:
            return _DROP
        kind = spec.get("type")
        if kind == "string" and spec.get("format") in ("int64", "uint64"):
            return _DROP if value in ("0", "-0", 0) else value
        if kind == "string" and spec.get("format") not in _MESSAGE_STRINGS:
            return _DROP if value == "" else value
        if kind in ("integer", "number"):
            return _DROP if _is_number(value) and value == 0 else value
        if kind == "boolean":
            return _DROP if value is False else value
        return value

    return _walk(api, schema, body, leaf, prune=True)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _walk(api: str, schema: str, body: Any, leaf: Leaf, *, prune: bool) -> Any:
    schemas: dict[str, Any] = discovery.load_document(api)["schemas"]

    def walk(spec: dict[str, Any], value: Any, owner: str, field: str | None) -> Any:
        while "$ref" in spec:
            spec = schemas[spec["$ref"]]
        kind = spec.get("type")
        if kind == "object" and isinstance(value, dict):
            properties: dict[str, Any] = spec.get("properties", {})
            extra = spec.get("additionalProperties")
            here = str(spec.get("id", ""))
            out: dict[str, Any] = {}
            for key, item in value.items():
                if key in properties:
                    new = walk(properties[key], item, here, key)
                elif isinstance(extra, dict):
                    new = walk(extra, item, here, None)  # a map value: no field of its own
                else:
                    new = item
                if new is _DROP or (prune and new in ([], {}) and _container(properties.get(key))):
                    continue
                out[key] = new
            return out
        if kind == "array" and isinstance(value, list):
            items: dict[str, Any] = spec.get("items", {})
            walked = [walk(items, item, owner, field) for item in value]
            # a list element is a value even when it is "" or 0: only fields are ever unset
            return [item if new is _DROP else new for item, new in zip(value, walked, strict=True)]
        return leaf(owner, field, spec, value)

    return walk(discovery.get_schema(api, schema), body, "", None)


def _container(prop: dict[str, Any] | None) -> bool:
    """Whether a field is a list or a map (an empty one is unset), not a message (an empty one is set)."""
    if prop is None:
        return False
    if prop.get("type") == "array":
        return True
    return prop.get("type") == "object" and "additionalProperties" in prop and not prop.get("properties")
