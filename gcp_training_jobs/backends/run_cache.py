"""Once per run: what every job's `check` of a `pulumi up` reads alike (a project's quota limits, what a region's live
jobs hold), read by the first check that needs it and shared with the others.

"Per run" lives in the process: the engine starts one dynamic-provider process per deployment and calls it from
several threads (pulumi/dynamic/__main__.py: a pool of 4), and that process unpickles and configures a provider once
per pickle (`get_provider`'s cache) and hands that one object to every call; every TrainingJob pickles to the same
bytes, so all the stack's jobs, in all those threads at once, are served by one provider instance. The provider is
therefore never written after `configure` (tests/test_training_job.py holds it), and what a run shares is kept here:
`RUN` is the one piece of mutable module-level state in code the engine calls, and all of it is behind one lock:
the first caller of a key reads it outside the lock while the later callers of that key wait for its answer (one
read per key, however many threads ask); an answer, or a failure, older than `max_age` on the injected clock is read
again, so a process that outlives one run (a test session, a program calling the provider itself) never keeps the
limits it read once. A test is a run of its own: tests/conftest.py clears `RUN` before each.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

T = TypeVar("T")

#: How long an answer serves a run: longer than one `up` of a hundred jobs takes to check them, short enough that
#: a limit raised while a process lives is read within a minute or two. The review is a forecast; the create's 429
#: is Google's own judgement, and a create refused for quota moves to the next placement.
MAX_AGE_SECONDS = 120.0


@dataclass
class _Entry:
    """One key's answer: `done` is set once `value` or `error` is, at `at` (the clock when its read began)."""

    at: float
    done: threading.Event = field(default_factory=threading.Event)
    value: Any = None
    error: BaseException | None = None


class RunCache:
    """Once-per-key answers, shared by threads, each kept `max_age` seconds of `clock` (time.monotonic unless
    injected)."""

    def __init__(self, max_age: float = MAX_AGE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[Hashable, _Entry] = {}

    def once(self, key: Hashable, read: Callable[[], T]) -> T:
        """`read()`'s answer for `key`: read now by the first caller (or the first after the answer grew older than
        max_age), awaited by those who ask while it is being read, kept for those who ask later. A failure is an
        answer too (raised to each caller, a copy of its own, until it is read again): the transport has retried
        what it retries, and every job of the run would meet the same refusal."""
        with self._lock:
            now = self._clock()
            entry = self._entries.get(key)
            mine = entry is None or (entry.done.is_set() and now - entry.at > self.max_age)
            if mine:
                self._drop_stale(now)
                entry = self._entries[key] = _Entry(now)
        assert entry is not None
        if mine:
            try:
                entry.value = read()
            except Exception as error:  # kept, and raised to every caller alike (each its own copy: _fresh)
                entry.error = error
            except BaseException as error:  # an interrupt: not an answer, so not kept
                entry.error = error
                self._forget(key, entry)
                raise
            finally:
                entry.done.set()
        else:
            entry.done.wait()
        if entry.error is not None:
            raise _fresh(entry.error) from entry.error
        return cast(T, entry.value)

    def clear(self) -> None:
        """Forget every answer (a read under way still answers its callers)."""
        with self._lock:
            self._entries.clear()

    def _forget(self, key: Hashable, entry: _Entry) -> None:
        with self._lock:
            if self._entries.get(key) is entry:
                del self._entries[key]

    def _drop_stale(self, now: float) -> None:
        """Forget answers past max_age (under the lock), so the table holds only what a run can still use."""
        for key in [k for k, e in self._entries.items() if e.done.is_set() and now - e.at > self.max_age]:
            del self._entries[key]


def _fresh(cached: BaseException) -> BaseException:
    """A new exception for one caller of a failed read, of the cached one's type, words and attributes: raising the
    cached object itself in every thread would have them all write its one traceback at once. Made without the
    type's __init__ (an ApiError's takes other arguments than the `args` it keeps)."""
    fresh = type(cached).__new__(type(cached), *cached.args)
    fresh.args = cached.args
    fresh.__dict__.update(vars(cached))
    return fresh


#: The answers of the process's run (see the module's docstring for why it is module state and how it is safe).
RUN = RunCache()
