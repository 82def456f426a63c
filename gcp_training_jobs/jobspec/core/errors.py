"""The one error base of the project, and its two kinds of bad input.

Every error a user can cause derives from TrainingJobsError, so callers (the CLI, the plan, a user's own
program) catch one class. SpecError carries every problem of an input at once; UnreadableError is an
input that cannot be read at all (exit code 2 on the command line).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.core.problems import Problem


class TrainingJobsError(Exception):
    """Base of every error this library raises for bad input or a failed API call."""


class SpecError(TrainingJobsError, ValueError):
    """Raised with every problem of an input at once (never only the first)."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class UnreadableError(TrainingJobsError):
    """A file that cannot be read or parsed at all (exit code 2 on the command line)."""


class ConcealedValueError(TrainingJobsError, ValueError):
    """A validator's refusal of a value that must not be printed (it holds a credential): the Problem names the
    field and says what is wrong, without the value given (problems.from_validation_error, which asks
    `conceals_value`: errors.py is imported by problems.py's readers, never by problems.py)."""

    conceals_value = True
