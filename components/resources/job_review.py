"""What the TrainingJob provider tells a reviewer, from the pure rules: the stack's guardrails and the fixed job
rules (check), the job's estimated cost (check, as an info line in `pulumi preview`) and what a replace or a
delete does to a job that is still queued or running (diff, delete). No Pulumi here: the provider logs and
fails with what these functions return.

A job is protected by `jobs.NAME.protect`, else by `guardrails.protectJobs`. The engine never asks a dynamic
provider before it deletes a resource that left the program (nor at `pulumi destroy`), so a protected active job
is refused by the provider's delete, at `pulumi up`, with what was last deployed; for that delete to hold for a
replace too, a replace is refused when the job is protected now *or* was when last deployed (protection is
lifted by a `pulumi up` of its own, as Pulumi's own `protect` option is).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import ValidationError

from components.jobspec.core.errors import TrainingJobsError
from components.jobspec.core.names import NAMESPACE
from components.jobspec.core.problems import Problem, from_validation_error
from components.jobspec.review.cost import estimate, source_lines
from components.jobspec.review.guardrails import (
    ACTIVE_STATES,
    Guardrails,
    end_of_life_problems,
    guardrail_problems,
    is_protected,
    protected_job_problem,
    running_job_warning,
)


class ProtectedJobError(TrainingJobsError):
    """A change would replace or delete a protected job that is queued, preparing or running."""


def guardrails_of(value: Any) -> tuple[Guardrails, list[Problem]]:
    """The `guardrails` input (the stack's, by alias; nothing: none), and what is wrong with it."""
    if not isinstance(value, Mapping):
        return Guardrails(), []
    try:
        return Guardrails.of(value), []
    except ValidationError as error:
        return Guardrails(), [Problem(f"{NAMESPACE}:guardrails.{p.path}" if p.path else f"{NAMESPACE}:guardrails",
                                      p.message) for p in from_validation_error(error, Guardrails)]


def job_rule_problems(body: Mapping[str, Any], name: str, labels: Mapping[str, str] | None, rails: Guardrails,
                      today: date) -> list[Problem]:
    """What one job breaks of its stack's per-job guardrails and of the fixed job rules (end-of-life
    accelerators); the stack-wide guardrails (maxAcceleratorsPerStack, maxHourlyUsd) are plan's and the pack's."""
    return guardrail_problems(body, name, labels, rails) + end_of_life_problems(body, name, today)


def cost_line(body: Mapping[str, Any], name: str, region: str | None) -> str:
    """`job NAME: estimated us-central1: on demand $../h; Spot ... (prices: PAGE, read DATE)`."""
    found = estimate(body, name, region or None)
    sources = "; ".join(source_lines(found.sources)) if found.sources else "; ".join(source_lines())
    return f"job {name}: estimated cost per hour while every machine runs: {found.text()} (prices: {sources})"


@dataclass(frozen=True)
class Standing:
    """A job's state as last known (or just read) and since when: startTime, else createTime."""

    state: str | None
    since: str | None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @classmethod
    def of(cls, outputs: Mapping[str, Any]) -> Standing:
        state = outputs.get("state")
        since = outputs.get("startTime") or outputs.get("createTime")
        return cls(state if isinstance(state, str) else None, since if isinstance(since, str) else None)


@dataclass(frozen=True)
class Protection:
    """Whether a job is protected now (the new inputs) and when last deployed (the state), and by what."""

    now: bool
    before: bool
    by_job: bool

    @classmethod
    def of(cls, olds: Mapping[str, Any], news: Mapping[str, Any] | None) -> Protection:
        def of_inputs(props: Mapping[str, Any]) -> tuple[bool, bool]:
            protect = props.get("protect")
            own = protect if isinstance(protect, bool) else None
            return is_protected(guardrails_of(props.get("guardrails"))[0], own), own is not None
        before, before_by_job = of_inputs(olds)
        now, now_by_job = of_inputs(news) if news is not None else (before, before_by_job)
        return cls(now, before, now_by_job if now else before_by_job)

    @property
    def any(self) -> bool:
        return self.now or self.before


def verdict(name: str, standing: Standing, protection: Protection, *, replacing: bool) -> tuple[str | None, str | None]:
    """(warning, failure) for a change that replaces (or deletes) a job: a warning in words for an active job,
    a failure instead when it is protected; (None, None) for a job at rest."""
    warning = running_job_warning(name, standing.state, standing.since, replacing)
    if warning is None:
        return None, None
    if not protection.any:
        return warning, None
    problem = protected_job_problem(name, standing.state, standing.since, replacing, protection.by_job)
    assert problem is not None
    failure = str(problem)
    if protection.before and not protection.now:
        failure += (" (it was protected when last deployed: lift the protection with a `pulumi up` of its own "
                    "first, then make the change)")
    return None, failure
