"""Request-body checks both APIs share: the discovery-schema check (400 with field violations), the
stripping of output-only fields from a created job, Google's label rules and lenient int64 reading."""

from __future__ import annotations

import copy
import re
from typing import Any

from gcp_training_jobs.emulator import discovery, proto_json
from gcp_training_jobs.emulator.errors import ApiError, invalid

_LABEL_CHARS_RE = re.compile(r"^[\w-]*$")


def validated(body: Any, api: str, schema: str, *, strict_int64: bool, enum_numbers: bool = False) -> dict[str, Any]:
    """`body` itself when it is a JSON object that fits the API's discovery schema; else 400."""
    if not isinstance(body, dict):
        raise invalid("Invalid JSON payload received. Expected a JSON object.")
    problems = discovery.validate_body(api, schema, body, strict_int64=strict_int64, enum_numbers=enum_numbers)
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


def vertex_fields(body: Any, schema: str, *, strict_int64: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Vertex AI create body read as the real service reads it: the schema check (enums as names or numbers),
    then (what the job keeps: the user's fields with enums as names, without output-only fields or nulls; what
    the checks judge: the same with proto3's unset values removed, see `proto_json`)."""
    body = validated(body, "aiplatform", schema, strict_int64=strict_int64, enum_numbers=True)
    dropped = discovery.output_only_fields("aiplatform", schema)
    named = proto_json.enum_names("aiplatform", schema, body)
    kept = {k: v for k, v in named.items() if k not in dropped and v is not None}
    judged: dict[str, Any] = proto_json.unset_defaults("aiplatform", schema, kept)
    return kept, judged


def check_labels(labels: Any, field_name: str) -> None:
    """Google's label rules (see `label_problem`), as a 400 naming `field_name`."""
    problem = label_problem(labels)
    if problem:
        raise invalid(f"Field: {field_name} Error: {problem}", field_name)


def label_problem(labels: Any) -> str | None:
    """What breaks Google's label rules, or None: keys start with a lowercase letter; keys and values <= 63
    chars of lowercase letters, digits, '_' and '-'; at most 64 labels."""
    if not isinstance(labels, dict):
        return None
    if len(labels) > 64:
        return "At most 64 labels are allowed."
    for key, value in labels.items():
        if not (
            0 < len(key) <= 63
            and key[0].isalpha()
            and key == key.lower()
            and _LABEL_CHARS_RE.match(key)
        ):
            return (f"Invalid label key {key!r}: keys must start with a lowercase letter and contain only "
                    "lowercase letters, digits, '_' and '-' (at most 63 characters).")
        if not isinstance(value, str) or len(value) > 63 or value != value.lower() or not (
            _LABEL_CHARS_RE.match(value)
        ):
            return (f"Invalid value {value!r} of label {key!r}: values contain only lowercase letters, digits, "
                    "'_' and '-' (at most 63 characters).")
    return None


def int_value(value: Any) -> int | None:
    """An integer sent as a JSON number or (int64 style) a decimal string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None
