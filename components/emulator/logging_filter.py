"""Cloud Logging's query language, the part a client of entries.list sends: comparisons joined by AND, OR, NOT
(or `-`) and parentheses, as Google documents it (docs.cloud.google.com/logging/docs/view/logging-query-language:
"The NOT operator has the highest precedence, followed by OR and AND in that order"; terms side by side are joined
by AND). gcloud's own filters are of this form (`resource.type="ml_job" AND resource.labels.job_id="123"`, and its
LogFetcher's `((timestamp="T" AND insertId>"I") OR timestamp>"T")`).

A comparison is `FIELD OP VALUE`: FIELD a dotted path into the LogEntry (`resource.labels.task_name`,
`jsonPayload.message`, `labels.KEY`), OP one of = != > >= < <= : (has: a case-insensitive substring) =~ !~
(regular expressions), VALUE a quoted string or a bare word. `timestamp` and `receiveTimestamp` compare as times,
`severity` by its rank (DEFAULT < DEBUG < ... < EMERGENCY; a name or a number). A field an entry lacks matches
nothing but `!=`. Global restrictions (a bare word), functions and `:*` are not served: 400, as for any filter the
emulator cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from components.emulator.errors import invalid

#: LogEntry.severity in rank order (logging v2 discovery: LogSeverity, DEFAULT (0) ... EMERGENCY (800)).
SEVERITIES = ("DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY")
_TIME_FIELDS = frozenset({"timestamp", "receiveTimestamp"})
_TOKEN = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>>=|<=|!=|=~|!~|=|>|<|:)|(?P<string>"(?:[^"\\]|\\.)*")'
                    r'|(?P<word>[^\s()"=<>!:~-][^\s()"=<>!:~]*)|(?P<minus>-))')

Entry = dict[str, Any]
Test = Callable[[Entry], bool]


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    at: int


def _tokens(text: str) -> list[_Token]:
    found, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            if text[pos:].strip() == "":
                break
            raise _unparseable(text, pos)
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append(_Token(kind, value, match.start(kind)))
        pos = match.end()
    return found


def _unparseable(text: str, at: int) -> Exception:
    return invalid(f"Unparseable filter: syntax error at column {at + 1} of {text!r}", "filter")


class _Parser:
    def __init__(self, text: str):
        self.text, self.tokens, self.pos = text, _tokens(text), 0

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise invalid(f"Unparseable filter: unexpected end of {self.text!r}", "filter")
        self.pos += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "word" and token.text == word:
            self.pos += 1
            return True
        return False

    def conjunction(self) -> Test:
        parts = [self.disjunction()]
        while (token := self.peek()) is not None and token.kind != "close":
            self.keyword("AND")
            parts.append(self.disjunction())
        return lambda entry: all(part(entry) for part in parts)

    def disjunction(self) -> Test:
        parts = [self.unary()]
        while self.keyword("OR"):
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else (lambda entry: any(part(entry) for part in parts))

    def unary(self) -> Test:
        token = self.peek()
        if token is not None and (token.kind == "minus" or (token.kind == "word" and token.text == "NOT")):
            self.pos += 1
            inner = self.unary()
            return lambda entry: not inner(entry)
        if token is not None and token.kind == "open":
            self.pos += 1
            inner = self.conjunction()
            if self.take().kind != "close":
                raise _unparseable(self.text, self.tokens[self.pos - 1].at)
            return inner
        return self.comparison()

    def comparison(self) -> Test:
        field = self.take()
        if field.kind != "word" or field.text in ("AND", "OR"):
            raise _unparseable(self.text, field.at)
        op = self.peek()
        if op is None or op.kind != "op":
            raise invalid(f"Unsupported filter {self.text!r}: a global restriction ({field.text!r} alone) is not "
                          "served by the emulator; compare a field: FIELD=VALUE", "filter")
        self.pos += 1
        value = self.take()
        if value.kind not in ("string", "word"):
            raise _unparseable(self.text, value.at)
        return _compare(field.text, op.text, value.text)


def compile_filter(text: str) -> Test:
    """The test of a filter (an empty one matches everything); 400 INVALID_ARGUMENT when it cannot be read."""
    parser = _Parser(text or "")
    if parser.peek() is None:
        return lambda entry: True
    test = parser.conjunction()
    if parser.peek() is not None:
        raise _unparseable(text, parser.tokens[parser.pos].at)
    return test


def field_value(entry: Entry, path: str) -> Any:
    """The value at a dotted path of a LogEntry, or None."""
    value: Any = entry
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def parse_time(text: str) -> datetime:
    """An RFC 3339 time (400 when it is not one)."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise invalid(f"Invalid timestamp {text!r}: expected RFC 3339, e.g. 2026-11-23T10:00:00Z", "filter")
    return parsed


def _rank(text: str) -> int:
    upper = text.upper()
    if upper in SEVERITIES:
        return SEVERITIES.index(upper) * 100
    if upper.isdigit():
        return int(upper)
    raise invalid(f"Invalid severity {text!r}; allowed: {', '.join(SEVERITIES)} or a number", "filter")


def _compare(path: str, op: str, wanted: str) -> Test:
    key: Callable[[Any], Any]
    if path in _TIME_FIELDS:
        target: Any = parse_time(wanted)
        key = parse_time
    elif path == "severity":
        target, key = _rank(wanted), _rank
    else:
        target, key = wanted, str
    if op in ("=~", "!~"):
        try:
            pattern = re.compile(wanted)
        except re.error as error:
            raise invalid(f"Invalid regular expression {wanted!r}: {error}", "filter") from None

    def test(entry: Entry) -> bool:
        raw = field_value(entry, path)
        if raw is None or isinstance(raw, dict | list):
            return op == "!="
        if op == ":":
            return wanted.casefold() in str(raw).casefold()
        if op in ("=~", "!~"):
            return (pattern.search(str(raw)) is not None) == (op == "=~")
        actual = key(str(raw))
        return {"=": actual == target, "!=": actual != target, ">": actual > target, ">=": actual >= target,
                "<": actual < target, "<=": actual <= target}[op]

    return test
