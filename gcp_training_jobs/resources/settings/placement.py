"""`gcp-training-jobs:placement`: where and how the stack's jobs may run (`regions`, `strategies`), and each job's
candidates within those bounds, judged by the one pass like a fallback, guardrailed and priced
(settings/candidates.py; jobspec.review.placement ranks them). No `placement`: nothing is suggested, nothing moves.

`jobs.NAME.placement: cheapest` makes the ranked candidates the job's placements, cheapest first, taken at
`pulumi up` as fallbacks are (quota refused, stockout: the next); `fallbacks` beside it is refused (one or the other).
A candidate is the job's own data with the candidate's region and `scheduling.strategy` put in
(resources.fallbacks.alternative_job), so it is the job as the API would take it there.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator, model_validator

from gcp_training_jobs.jobspec.core.names import NAMESPACE, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.review.placement import STRATEGIES, Bounds, Candidate, kept
from gcp_training_jobs.jobspec.rules.regions import region_problem
from gcp_training_jobs.jobspec.vocab.training_input import WireModel

#: The value of `jobs.NAME.placement` that makes the deploy take the cheapest candidate first.
CHEAPEST = "cheapest"


def none_when_empty(value: Any) -> Any:
    """No bounds: nothing, an empty mapping, or its JSON text as Pulumi hands the project's default to a program."""
    return None if value in (None, "", {}) or (isinstance(value, str) and value.strip() in ("{}", "null")) else value


class PlacementSettings(WireModel):
    """`gcp-training-jobs:placement`: the regions and strategies the stack's jobs may run in (data residency, whether
    a job may be preempted)."""

    regions: tuple[str, ...] = Field(min_length=1)
    """Vertex AI training regions the jobs may run in."""
    strategies: tuple[str, ...] = ("STANDARD",)
    """scheduling.strategy values the jobs may run as: STANDARD, SPOT, FLEX_START (default STANDARD alone)."""

    @model_validator(mode="before")
    @classmethod
    def _from_json_text(cls, value: Any) -> Any:
        """Pulumi hands object config to the program as JSON text."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as error:
                raise ValueError("expected a mapping {regions: [...], strategies: [...]}") from error
        return value

    @field_validator("regions")
    @classmethod
    def _regions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for region in value:
            if (refused := region_problem(region, "regions", VERTEX)) is not None:
                raise ValueError(refused.message)
        return tuple(dict.fromkeys(value))

    @field_validator("strategies")
    @classmethod
    def _strategies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for strategy in value:
            if strategy not in STRATEGIES:
                raise ValueError(f"{strategy!r} is not a scheduling strategy; allowed: {', '.join(STRATEGIES)}")
        if not value:
            raise ValueError(f"no strategy; allowed: one or more of {', '.join(STRATEGIES)}")
        return tuple(dict.fromkeys(value))

    @property
    def bounds(self) -> Bounds:
        return Bounds(self.regions, self.strategies)


def job_problems(name: str, job: Any, bounds: PlacementSettings | None) -> list[Problem]:
    """`jobs.NAME.placement` against the stack: `cheapest` needs the stack's bounds, and no `fallbacks` beside it."""
    if getattr(job, "placement", None) != CHEAPEST:
        return []
    at = f"{NAMESPACE}:jobs.{name}.placement"
    if job.fallbacks:
        return [Problem(at, "cheapest beside fallbacks; allowed: one or the other (placement: cheapest makes the "
                        "stack's placement candidates the job's fallbacks, cheapest first)")]
    if bounds is None:
        return [Problem(at, f"cheapest without {NAMESPACE}:placement; allowed: cheapest with the stack's bounds "
                        "({regions: [...], strategies: [...]}), or no placement")]
    if kept(job.facts) is not None:
        return [Problem(at, f"cheapest on a job that {kept(job.facts)}; allowed: no placement")]
    return []


def wire(job: Any, ranked: tuple[Candidate, ...]) -> list[dict[str, Any]]:
    """The ranked candidates as the `fallbacks` input of a `placement: cheapest` job (each its region, and its
    strategy on a jobSpec or tuningJob), in the order `up` tries them."""
    spec = job.job_spec is not None or job.tuning_job is not None
    return [{"region": c.region, "scheduling": {"strategy": c.strategy}} if spec else {"region": c.region}
            for c in ranked]
