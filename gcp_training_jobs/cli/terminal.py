"""Every command's output as a terminal shows it: the standard streams a command writes to, with each control and
invisible formatting character of what it writes escaped (terminal_text), so that a value
from a stack file, a job or an API's answer (a job's args, a log line) cannot clear the screen, move the cursor,
rewrite a line already printed or set the terminal's title."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


def terminal_text(text: str) -> str:
    """Text as it may reach a terminal: each control character (ESC, so no `ESC[2J`, a carriage return, a bell, C1
    codes) and each invisible formatting one (bidirectional overrides) escaped as `\\uXXXX`, as JSON writes one (a
    JSON document stays one); newlines and tabs kept. Every command's output passes through it (terminal_streams)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else
                   f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in text)


class TerminalStream:
    """A text stream writing `terminal_text` of what it is given to the stream it wraps (all else is the wrapped
    stream's: flush, isatty, encoding, fileno)."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def terminal_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr as TerminalStreams while a command runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(out), TerminalStream(err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
