"""The common slips of hand-written YAML in plain words, for the parser's errors (PyYAML's and libyaml's wording
differs, and neither says "tab" for a tab): what was found, where (line and column, 1-based), and what to do.

`plain_words(error, text)` reads the error's marks and the text around them; a slip it does not know keeps the
parser's own problem, after the project's `not valid YAML` (documents.parse_yaml names the file).
"""

from __future__ import annotations

import re
from typing import Any

#: What closes each flow collection's opener.
_CLOSER = {"[": "]", "{": "}"}
#: A key ended on a line: `key:` followed by a space or the line's end (a URL's `gs://` is no key's end).
_KEY_END = re.compile(r"^\s*(?:-\s+)?[^\s#'\"][^#]*?:(?:\s|$)")


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _tab(text: str, mark: Any) -> str | None:
    """A tab at the mark, else the first tab on the mark's line or the line before (where the scanner stopped)."""
    lines = _lines(text)
    for number in (mark.line, mark.line - 1):
        if 0 <= number < len(lines) and "\t" in lines[number]:
            column = mark.column if number == mark.line and lines[number][mark.column:mark.column + 1] == "\t" \
                else lines[number].index("\t")
            return (f"a tab at line {number + 1}, column {column + 1}; YAML indents and separates with spaces "
                    "only: replace the tab with spaces")
    return None


def _colon(text: str, mark: Any) -> str:
    """`mapping values are not allowed here`: a second `: ` on a line, or a key the scanner read as the value above
    (the line above has no colon, or this line is indented deeper than a key whose value is already set)."""
    lines = _lines(text)
    line = lines[mark.line] if mark.line < len(lines) else ""
    if _KEY_END.match(line[:mark.column]):
        return (f"a colon inside an unquoted value at {_at(mark)}; allowed: quote the value (key: \"a: b\") or "
                "drop the space after the colon")
    above = next((n for n in range(mark.line - 1, -1, -1) if lines[n].strip() and not lines[n].lstrip()
                  .startswith("#")), None)
    if above is not None and ":" not in lines[above] and not lines[above].lstrip().startswith("-"):
        return (f"line {above + 1} has no colon after its key (`key: value`), so line {mark.line + 1} reads as "
                f"its continuation; allowed: `key: value` on each line")
    return (f"line {mark.line + 1} is indented deeper than the key above it, whose value is already set; "
            "allowed: the same indentation as the keys beside it (or nothing after the colon above, to nest)")


#: What opens or closes a flow collection, and what hides a bracket (quoted scalars, comments).
FLOW_TOKEN = re.compile(r"""[\[\]{}]|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|(?:^|(?<=\s))#[^\n]*""", re.M)


def _unclosed(text: str, end: int) -> tuple[str, int, int] | None:
    """The innermost bracket still open before `end`: (bracket, line, column), 0-based."""
    opened: list[int] = []
    for match in FLOW_TOKEN.finditer(text, 0, end):
        token = match.group()
        if token in ("[", "{"):
            opened.append(match.start())
        elif token in ("]", "}") and opened:
            opened.pop()
    if not opened:
        return None
    at = opened[-1]
    return text[at], text.count("\n", 0, at), at - (text.rfind("\n", 0, at) + 1)


def plain_words(error: Any, text: str) -> str:
    """One line for a YAML error: the slip, where, and what is allowed; the parser's own problem where the slip
    is none of the common ones."""
    problem = str(getattr(error, "problem", None) or error)
    context = str(getattr(error, "context", None) or "")
    mark, opened = getattr(error, "problem_mark", None), getattr(error, "context_mark", None)
    if mark is not None and ("cannot start any token" in problem or "tab" in problem):
        found = _tab(text, mark)
        if found:
            return found
    if mark is not None and "mapping values are not allowed" in problem:
        return _colon(text, mark)
    if opened is not None and "quoted scalar" in context:
        quote = text[opened.index] if opened.index < len(text) else "quote"
        return f"the {quote} opened at {_at(opened)} is never closed; allowed: end the value with {quote} too"
    if mark is not None and "flow" in context:
        bracket = _unclosed(text, mark.index)
        if bracket is not None:
            return (f"the {bracket[0]} opened at line {bracket[1] + 1}, column {bracket[2] + 1} is never closed; "
                    f"allowed: close it with {_CLOSER[bracket[0]]}")
    if mark is not None and "block mapping" in context:
        start = f" (the mapping that starts at {_at(opened)})" if opened is not None else ""
        return (f"line {mark.line + 1}, column {mark.column + 1} is not a key of the mapping above{start}: it is "
                "indented differently from the keys beside it, or is a list item (-) where a key belongs; allowed: "
                "`key: value` at the same indentation as the keys beside it")
    if mark is not None and "simple key" in context:
        return f"a key without its colon at {_at(opened or mark)}; allowed: `key: value`"
    return problem
