"""Google's partial response: the `fields` system parameter every REST method takes
(https://cloud.google.com/apis/docs/system-parameters, read 2026-12-02: `a,b/c,d(e,f)`): the answer holds only the
fields named, each list's items cut alike. A selector that does not parse is a 400."""

from __future__ import annotations

from typing import Any

from gcp_training_jobs.emulator.errors import ApiError

#: A parsed selector: each field named, and what of it is kept (None: all of it).
Selector = dict[str, "Selector | None"]


def parse(fields: str) -> Selector:
    """The selector `fields` names; ApiError 400 when it does not parse."""
    selector, rest = _parse(fields.replace(" ", ""), 0)
    if rest != len(fields.replace(" ", "")) or not selector:
        raise ApiError(400, f"Invalid field selection {fields!r}", "INVALID_ARGUMENT")
    return selector


def _parse(text: str, at: int) -> tuple[Selector, int]:
    selector: Selector = {}
    while at < len(text):
        end = at
        while end < len(text) and text[end] not in ",()":
            end += 1
        path = text[at:end]
        if not path or any(not part for part in path.split("/")):
            raise ApiError(400, f"Invalid field selection {text!r}", "INVALID_ARGUMENT")
        inner: Selector | None = None
        if end < len(text) and text[end] == "(":
            inner, end = _parse(text, end + 1)
            if end >= len(text) or text[end] != ")" or not inner:
                raise ApiError(400, f"Invalid field selection {text!r}", "INVALID_ARGUMENT")
            end += 1
        _merge(selector, path.split("/"), inner)
        if end < len(text) and text[end] == ")":
            return selector, end
        if end < len(text):  # a comma
            end += 1
        at = end
    return selector, at


def _merge(selector: Selector, parts: list[str], inner: Selector | None) -> None:
    head, *tail = parts
    if head in selector and selector[head] is None:
        return  # the whole field is named already
    if not tail and inner is None:
        selector[head] = None
        return
    below = selector.setdefault(head, {})
    assert below is not None
    if tail:
        _merge(below, tail, inner)
    else:
        below.update(inner or {})


def select(payload: Any, selector: Selector) -> Any:
    """`payload` cut to `selector`: an object keeps the fields named, a list each item cut alike."""
    if isinstance(payload, list):
        return [select(item, selector) for item in payload]
    if not isinstance(payload, dict):
        return payload
    kept = {}
    for name, inner in selector.items():
        if name in payload:
            kept[name] = payload[name] if inner is None else select(payload[name], inner)
    return kept
