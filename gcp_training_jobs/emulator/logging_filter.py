"""Cloud Logging's query language, the part a client of entries.list sends: comparisons and global restrictions
joined by AND, OR, NOT (or `-`) and parentheses, as Google documents it (https://cloud.google.com/logging/docs/
view/logging-query-language, read 2026-11-25: "The NOT operator has the highest precedence, followed by OR and AND
in that order"; terms side by side are joined by AND). gcloud's own filters are of this form
(`resource.type="ml_job" AND resource.labels.job_id="123"`, and its LogFetcher's `((timestamp="T" AND
insertId>"I") OR timestamp>"T")`).

- A comparison is `FIELD OP VALUE`: FIELD a dotted path into the LogEntry (`resource.labels.task_name`,
  `jsonPayload.message`), a segment quoted when it holds other characters (`labels."ml.googleapis.com/trial_id"`);
  OP one of = != > >= < <= : (has: a case-insensitive substring) =~ !~ (regular expressions); VALUE a quoted
  string or a bare word. `timestamp` and `receiveTimestamp` compare as times, `severity` by its rank (DEFAULT <
  DEBUG < ... < EMERGENCY; a name or a number), a number in the entry as a number. A field an entry lacks matches
  nothing but `!=`; a field holding a list matches when one of its values does; `:` on a message searches its
  values.
- `FIELD:*` is a presence test: the entry has the field (`-FIELD:*`, `NOT FIELD:*`: it does not).
- A global restriction, a bare word or a quoted string alone (`"Job is running"`, `unicorn`), matches an entry
  one of whose values (its text or JSON payload, its labels, any field) holds it, case-insensitively.
- Functions (`sample()`, `SEARCH()`, `log_id()`, `source()`, `ip_in_net()`, `cast()`, `regex_extract()`, ...)
  are not served: 400 naming the function. Any other form the emulator cannot read (a value list `FIELD=(a OR
  b)`, `*` with another operator than `:`) is a 400 naming it, never a silent empty answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gcp_training_jobs.emulator.errors import invalid

#: LogEntry.severity in rank order (logging v2 discovery: LogSeverity, DEFAULT (0) ... EMERGENCY (800)).
SEVERITIES = ("DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY")
_TIME_FIELDS = frozenset({"timestamp", "receiveTimestamp"})
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_SEGMENT = rf'(?:[A-Za-z_@$][\w@$-]*|{_QUOTED})'
_TOKEN = re.compile(rf'\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>>=|<=|!=|=~|!~|=|>|<|:)'
                    rf'|(?P<path>{_SEGMENT}(?:\.{_SEGMENT})+)|(?P<string>{_QUOTED})'
                    r'|(?P<word>[^\s()"=<>!:~-][^\s()"=<>!:~]*)|(?P<minus>-))')

Entry = dict[str, Any]
Test = Callable[[Entry], bool]


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    at: int
    end: int
    parts: tuple[str, ...] = ()  # a path's segments, unquoted


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def _segments(text: str) -> tuple[str, ...]:
    return tuple(_unquote(s) if s.startswith('"') else s for s in re.findall(_SEGMENT, text))


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
        parts: tuple[str, ...] = ()
        if kind == "string":
            value = _unquote(value)
        elif kind == "path":
            parts = _segments(value)
        elif kind == "word":
            parts = (value,)
        found.append(_Token(kind, value, match.start(kind), match.end(kind), parts))
        pos = match.end()
    return found


def _unparseable(text: str, at: int) -> Exception:
    return invalid(f"Unparseable filter: syntax error at column {at + 1} of {text!r}", "filter")


def _unserved(text: str, form: str) -> Exception:
    return invalid(f"Unsupported filter {text!r}: {form} is not served by the emulator", "filter")


class _Parser:
    def __init__(self, text: str):
        self.text, self.tokens, self.pos = text, _tokens(text), 0

    def peek(self, ahead: int = 0) -> _Token | None:
        at = self.pos + ahead
        return self.tokens[at] if at < len(self.tokens) else None

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
        return self.term()

    def term(self) -> Test:
        field = self.take()
        if field.kind not in ("word", "path", "string") or field.text in ("AND", "OR"):
            raise _unparseable(self.text, field.at)
        after = self.peek()
        if after is not None and after.kind == "open" and after.at == field.end and field.kind in ("word", "path"):
            raise _unserved(self.text, f"the function {field.text}()")
        if after is None or after.kind != "op":
            if field.kind == "path" and any(not re.fullmatch(r"[\w@$-]+", p) for p in field.parts):
                raise _unserved(self.text, f"a field path alone ({field.text})")
            return _global(field.text)
        if field.kind == "string":
            raise _unserved(self.text, f"a quoted string compared as a field ({field.text!r} {after.text})")
        self.pos += 1
        value = self.take()
        if value.kind == "open":
            raise _unserved(self.text, f"a list of values ({field.text}{after.text}(...))")
        if value.kind not in ("string", "word", "path"):
            raise _unparseable(self.text, value.at)
        if value.kind != "string" and value.text == "*":
            if after.text != ":":
                raise _unserved(self.text, f"{field.text}{after.text}* (a presence test is {field.text}:*)")
            return _present(field.parts)
        return _compare(field.parts, after.text, value.text)


def compile_filter(text: str) -> Test:
    """The test of a filter (an empty one matches everything); 400 INVALID_ARGUMENT when it cannot be read or
    holds a form the emulator does not serve."""
    parser = _Parser(text or "")
    if parser.peek() is None:
        return lambda entry: True
    test = parser.conjunction()
    if parser.peek() is not None:
        raise _unparseable(text, parser.tokens[parser.pos].at)
    return test


def field_value(entry: Entry, path: str | tuple[str, ...]) -> Any:
    """The value at a path of a LogEntry (dotted text, or its segments), or None."""
    value: Any = entry
    for part in path.split(".") if isinstance(path, str) else path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _global(wanted: str) -> Test:
    folded = wanted.casefold()
    return lambda entry: any(folded in _text(leaf).casefold() for leaf in _leaves(entry))


def _present(path: tuple[str, ...]) -> Test:
    return lambda entry: field_value(entry, path) is not None


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


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _compare(path: tuple[str, ...], op: str, wanted: str) -> Test:
    key: Callable[[Any], Any]
    name = ".".join(path)
    if name in _TIME_FIELDS:
        target: Any = parse_time(wanted)
        key = parse_time
    elif name == "severity":
        target, key = _rank(wanted), _rank
    else:
        target, key = wanted, _text
    if op in ("=~", "!~"):
        try:
            pattern = re.compile(wanted)
        except re.error as error:
            raise invalid(f"Invalid regular expression {wanted!r}: {error}", "filter") from None
    ordering = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, ">": lambda a, b: a > b,
                ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
    number = _number(wanted)

    def one(raw: Any) -> bool:
        if op == ":":
            return any(wanted.casefold() in _text(leaf).casefold() for leaf in _leaves(raw))
        if isinstance(raw, dict):
            return False
        if op in ("=~", "!~"):
            return pattern.search(_text(raw)) is not None
        if isinstance(raw, int | float) and not isinstance(raw, bool) and number is not None \
                and key is _text:
            return bool(ordering[op](raw, number))
        return bool(ordering[op](key(_text(raw)), target))

    def equal(raw: Any) -> bool:
        if isinstance(raw, dict):
            return False
        if isinstance(raw, int | float) and not isinstance(raw, bool) and number is not None and key is _text:
            return bool(raw == number)
        return bool(key(_text(raw)) == target)

    def test(entry: Entry) -> bool:
        raw = field_value(entry, path)
        if raw is None:
            return op == "!="
        if op == "!=":
            return not any(equal(v) for v in (raw if isinstance(raw, list) else [raw]))
        if op == "!~":
            return not any(one(v) for v in (raw if isinstance(raw, list) else [raw]) if not isinstance(v, dict))
        return any(one(v) for v in (raw if isinstance(raw, list) else [raw]))

    return test
