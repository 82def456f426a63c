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

What the run itself does that a read made before it cannot hold (a job it made, with what it asks) is noted beside
the answers (`note`), under the same lock and for the same `max_age`; `once_since` gives an answer with the notes
made since that answer's read began, so a reader adds the run's own doings to a read once per run without reading
again (a note made before the read began is in the read itself).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

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


@dataclass(frozen=True)
class Since(Generic[T]):
    """An answer of the run (`value`) and the items noted since its read began (`noted`, in the order noted)."""

    value: T
    noted: tuple[Any, ...]


class RunCache:
    """Once-per-key answers, shared by threads, each kept `max_age` seconds of `clock` (time.monotonic unless
    injected)."""

    def __init__(self, max_age: float = MAX_AGE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[Hashable, _Entry] = {}
        self._notes: dict[Hashable, list[tuple[float, Any]]] = {}

    def once(self, key: Hashable, read: Callable[[], T]) -> T:
        """`read()`'s answer for `key`: read now by the first caller (or the first after the answer grew older than
        max_age), awaited by those who ask while it is being read, kept for those who ask later. A failure is an
        answer too (raised to each caller, a copy of its own, until it is read again): the transport has retried
        what it retries, and every job of the run would meet the same refusal."""
        return cast(T, self._answer(self._entry(key, read)))

    def once_since(self, key: Hashable, read: Callable[[], T], noted: Hashable) -> Since[T]:
        """`once(key, read)`'s answer, and the items noted under `noted` at or after that answer's read began (one
        noted before it the read itself holds; one noted while it was read, it may hold too: the reader tells)."""
        entry = self._entry(key, read)
        value = cast(T, self._answer(entry))
        with self._lock:
            return Since(value, tuple(item for at, item in self._notes.get(noted, ()) if at >= entry.at))

    def note(self, key: Hashable, item: Any) -> None:
        """Keep `item` under `key` for max_age of the clock: something the run did that an answer read before it
        cannot hold (once_since gives it to the readers of answers read before it)."""
        with self._lock:
            now = self._clock()
            self._drop_stale(now)
            self._notes.setdefault(key, []).append((now, item))

    def _entry(self, key: Hashable, read: Callable[[], T]) -> _Entry:
        """The entry of `key` with its answer (or failure) set: read by this caller or awaited."""
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
        return entry

    @staticmethod
    def _answer(entry: _Entry) -> Any:
        if entry.error is not None:
            raise _fresh(entry.error) from entry.error
        return entry.value

    def clear(self) -> None:
        """Forget every answer and note (a read under way still answers its callers)."""
        with self._lock:
            self._entries.clear()
            self._notes.clear()

    def _forget(self, key: Hashable, entry: _Entry) -> None:
        with self._lock:
            if self._entries.get(key) is entry:
                del self._entries[key]

    def _drop_stale(self, now: float) -> None:
        """Forget answers and notes past max_age (under the lock), so the tables hold only what a run can still use (an
        answer read before a note is older than it, so read again before the note is forgotten)."""
        for key in [k for k, e in self._entries.items() if e.done.is_set() and now - e.at > self.max_age]:
            del self._entries[key]
        for key, notes in list(self._notes.items()):
            kept = [(at, item) for at, item in notes if now - at <= self.max_age]
            if kept:
                self._notes[key] = kept
            else:
                del self._notes[key]


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
