"""Request-body checks both APIs share: the discovery-schema check (400 with field violations), the
stripping of output-only fields from a created job, Google's label rules and lenient int64 reading."""

from __future__ import annotations

import copy
import re
from typing import Any

from components.emulator import discovery
from components.emulator.errors import ApiError, invalid

_LABEL_CHARS_RE = re.compile(r"^[\w-]*$")


def validated(body: Any, api: str, schema: str, *, strict_int64: bool) -> dict[str, Any]:
    """`body` itself when it is a JSON object that fits the API's discovery schema; else 400."""
    if not isinstance(body, dict):
        raise invalid("Invalid JSON payload received. Expected a JSON object.")
    problems = discovery.validate_body(api, schema, body, strict_int64=strict_int64)
    if problems:
        raise ApiError(
            400,
            "Invalid JSON payload received. " + "; ".join(problems),
            "INVALID_ARGUMENT",
            [(p.partition(": ")[0], p) for p in problems],
        )
    return body


def user_fields(
    body: Any, api: str, schema: str, *, strict_int64: bool, output_only: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """A copy of a valid create body without output-only fields (the schema's and `output_only`) or nulls."""
    body = validated(body, api, schema, strict_int64=strict_int64)
    dropped = discovery.output_only_fields(api, schema) | output_only
    return {k: copy.deepcopy(v) for k, v in body.items() if k not in dropped and v is not None}


def check_labels(labels: Any, field_name: str) -> None:
    """Google's label rules: keys start with a lowercase letter; keys and values <= 63 chars of
    lowercase letters, digits, '_' and '-'; at most 64 labels."""
    if not isinstance(labels, dict):
        return
    if len(labels) > 64:
        raise invalid(f"Field: {field_name} Error: At most 64 labels are allowed.", field_name)
    for key, value in labels.items():
        if not (
            0 < len(key) <= 63
            and key[0].isalpha()
            and key == key.lower()
            and _LABEL_CHARS_RE.match(key)
        ):
            raise invalid(
                f"Field: {field_name} Error: Invalid label key {key!r}: keys must start with a lowercase "
                "letter and contain only lowercase letters, digits, '_' and '-' (at most 63 characters).",
                field_name,
            )
        if not isinstance(value, str) or len(value) > 63 or value != value.lower() or not (
            _LABEL_CHARS_RE.match(value)
        ):
            raise invalid(
                f"Field: {field_name} Error: Invalid value {value!r} of label {key!r}: values contain only "
                "lowercase letters, digits, '_' and '-' (at most 63 characters).",
                field_name,
            )


def int_value(value: Any) -> int | None:
    """An integer sent as a JSON number or (int64 style) a decimal string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None
