"""List requests of both APIs: the `filter` language (labels.KEY, state and an API's own fields with
=, != and :, joined by AND), page sizes and opaque page tokens, newest job first."""

from __future__ import annotations

import base64
import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.emulator.errors import invalid


@dataclass
class Term:
    """One `field op value` term of a list filter (terms are ANDed)."""

    field: str
    op: str
    value: str
    negate: bool = False


_TERM_RE = re.compile(
    r'\s*(?P<neg>NOT\s+)?(?P<field>[A-Za-z_][A-Za-z0-9_.\-/]*)\s*(?P<op>!=|=|:)\s*'
    r'(?P<value>"(?:[^"\\]|\\.)*"|[^\s"()]+)\s*'
)
_AND_RE = re.compile(r"AND\s+")


def parse_filter(text: str) -> list[Term]:
    """Parse `a=b AND labels.k="v" AND NOT state:RUNNING`; OR and parentheses are not supported."""
    terms: list[Term] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TERM_RE.match(text, pos)
        if not match:
            raise invalid(f"Unsupported or malformed filter {text!r} at position {pos}.", "filter")
        value = match.group("value")
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        terms.append(Term(match.group("field"), match.group("op"), value, bool(match.group("neg"))))
        pos = match.end()
        if pos < len(text):
            joiner = _AND_RE.match(text, pos)
            if not joiner:
                raise invalid(f"Unsupported filter {text!r}: terms may only be joined by AND.", "filter")
            pos = joiner.end()
    return terms


def term_matches(term: Term, actual: str | None) -> bool:
    if term.op == ":":
        if term.value == "*":
            hit = actual is not None
        else:
            hit = actual is not None and fnmatch.fnmatchcase(actual, term.value)
    elif term.op == "=":
        hit = actual == term.value
    else:
        hit = actual != term.value
    return hit != term.negate


def field_value(job: Any, name: str, fields: dict[str, Callable[[Any], str | None]]) -> str | None:
    """The value a filter term compares: labels.KEY, state, or one of the API's own `fields` (the
    first of which is the one error messages name)."""
    if name.startswith("labels."):
        return job.labels.get(name[len("labels."):])
    if name == "state":
        return job.state
    getter = fields.get(name)
    if getter is None:
        supported = next(iter(fields))
        raise invalid(
            f"Unsupported filter field {name!r} (supported: labels.KEY, state, {supported}).", "filter"
        )
    return getter(job)


def encode_token(seq: int, kind: str = "after") -> str:
    """A page token: `kind` (what a list pages by: the last job's sequence, an offset into quota metrics, ...) and
    the number it resumes from."""
    return base64.urlsafe_b64encode(f"{kind}:{seq}".encode()).decode("ascii")


def decode_token(token: str, kind: str = "after") -> int:
    """The number a token of `kind` resumes from (400 INVALID_ARGUMENT for any other token)."""
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii")
        prefix, _, number = text.partition(":")
        if prefix != kind:
            raise ValueError(text)
        return int(number)
    except (ValueError, UnicodeError) as error:
        raise invalid("Invalid page token.", "page_token") from error


def page_size(requested: int | None, default: int, largest: int) -> int:
    """The page size in force: the default when none (or 0) is asked, at most `largest`."""
    if requested is not None and requested < 0:
        raise invalid("Field: page_size Error: The page size must not be negative.", "page_size")
    return min(requested or default, largest)


def offset_page(items: Sequence[Any], size: int, page_token: str | None, kind: str) -> tuple[list[Any], str | None]:
    """The page of `items` (in their order) that `page_token` (of `kind`: an offset) starts, `size` long at most; and
    the next page's token, None after the last."""
    start = decode_token(page_token, kind) if page_token else 0
    page = list(items[start:start + size])
    return page, encode_token(start + size, kind) if start + size < len(items) else None


def select_page(
    jobs: Sequence[Any],
    terms: list[Term],
    size: int,
    page_token: str | None,
    fields: dict[str, Callable[[Any], str | None]],
) -> tuple[list[Any], str | None]:
    """The jobs matching every term, newest first, after the token's job; and the next page's token."""
    selected = [j for j in jobs if all(term_matches(t, field_value(j, t.field, fields)) for t in terms)]
    selected.sort(key=lambda j: j.seq, reverse=True)
    if page_token:
        after = decode_token(page_token)
        selected = [j for j in selected if j.seq < after]
    page = selected[:size]
    token = encode_token(page[-1].seq) if len(selected) > size else None
    return page, token
