"""Whether a training job is protected, read from its inputs without Pulumi: by its own `protect` input when set,
else by its stack's guardrails (`protectJobs` of the `guardrails` input, read here). A replace or delete is refused
for an active job protected now or when last deployed (training_job.review); `diff` says which of its changes
`up` would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.review.guardrails import Guardrails
from gcp_training_jobs.resources.job_model.declared import GUARDRAILS, PROTECT


def guardrails_of(value: Any) -> tuple[Guardrails, list[Problem]]:
    """The `guardrails` input (the stack's, by alias; nothing: none), and what is wrong with it."""
    if not isinstance(value, Mapping):
        return Guardrails(), []
    try:
        return Guardrails.of(value), []
    except ValidationError as error:
        return Guardrails(), [Problem(f"{NAMESPACE}:guardrails.{p.path}" if p.path else f"{NAMESPACE}:guardrails",
                                      p.message) for p in from_validation_error(error, Guardrails)]


def protect_of(value: Any) -> bool | None:
    """The `protect` input: true or false as set; None when unset (the guardrails' protectJobs decides)."""
    return value if isinstance(value, bool) else None


def is_protected(guardrails: Guardrails | Mapping[str, Any] | None, job_protect: bool | None) -> bool:
    """A job is protected by `jobs.NAME.protect` when set, else by the stack's guardrails.protectJobs."""
    return job_protect if job_protect is not None else Guardrails.of(guardrails).protect_jobs


@dataclass(frozen=True)
class Protection:
    """Whether a job is protected now (the new inputs) and when last deployed (the state), and by what."""

    now: bool
    before: bool
    by_job: bool

    @classmethod
    def of(cls, olds: Mapping[str, Any], news: Mapping[str, Any] | None) -> Protection:
        def of_inputs(props: Mapping[str, Any]) -> tuple[bool, bool]:
            own = protect_of(props.get(PROTECT.wire))
            return is_protected(guardrails_of(props.get(GUARDRAILS.wire))[0], own), own is not None
        before, before_by_job = of_inputs(olds)
        now, now_by_job = of_inputs(news) if news is not None else (before, before_by_job)
        return cls(now, before, now_by_job if now else before_by_job)

    @property
    def any(self) -> bool:
        return self.now or self.before
