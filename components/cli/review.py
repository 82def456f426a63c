"""The review part of `plan`: what the stack's jobs cost per hour, and whether the stack keeps its guardrails.

Cost and guardrails are judged on the bodies the backends would send (components.jobspec.review.cost and
.guardrails, through the settings' rendered jobs), the fixed bucket and IAM rules on the resources the
program registered under the mocks: the same functions the policy pack runs under `pulumi preview`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from components.jobspec.core.problems import Problem
from components.jobspec.review.cost import StackEstimate, estimate, estimate_stack, source_lines
from components.jobspec.review.guardrails import (
    GUARDRAILS_KEY,
    RULE_ADDITIVE_IAM,
    RULE_END_OF_LIFE,
    RULE_PRIVATE_BUCKETS,
    resource_problems,
)
from components.resources.settings import StackSettings
from components.resources.settings.guardrails import guardrail_problems_of, rendered_jobs

FIXED_RULES = (RULE_END_OF_LIFE, RULE_PRIVATE_BUCKETS, RULE_ADDITIVE_IAM)


@dataclass
class Review:
    """A stack's cost estimate, its declared guardrails and what breaks them."""

    cost: StackEstimate
    declared: dict[str, Any]
    problems: list[Problem]


def review(settings: StackSettings, resources: Iterable[Any], today: date | None = None) -> Review:
    """Judge a stack: its jobs (guardrails, fixed job rules, cost) and its registered resources (fixed rules).

    `resources`: the program's registrations (anything with `.type`, `.name`, `.inputs`, `.custom`).
    """
    jobs = rendered_jobs(settings)
    problems = guardrail_problems_of(settings, today)
    for reg in resources:
        if getattr(reg, "custom", True):
            problems += resource_problems(reg.type, reg.name, reg.inputs)
    cost = estimate_stack([estimate(job.body, job.name, job.region) for job in jobs])
    declared = settings.guardrails.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    return Review(cost, declared, list(dict.fromkeys(problems)))


def review_document(checked: Review) -> dict[str, Any]:
    """The review as data (keys `cost` and `guardrails` of the plan document)."""
    cost = checked.cost
    return {
        "cost": {
            "jobs": {e.name: {"region": e.region, "strategy": e.strategy, "onDemand": _amount(e.on_demand),
                              "spot": _amount(e.spot), "text": e.text()} for e in cost.jobs},
            "stack": {"onDemand": _amount(cost.on_demand), "spot": _amount(cost.spot), "text": cost.text()},
            "sources": source_lines(cost.sources),
        },
        "guardrails": {"declared": checked.declared, "fixedRules": list(FIXED_RULES),
                       "problems": [str(p) for p in checked.problems]},
    }


def _amount(amount: Any) -> dict[str, Any]:
    return {"knownUsdPerHour": round(amount.known, 6), "unknown": list(amount.unknown),
            "complete": amount.complete}


def review_lines(document: dict[str, Any]) -> list[str]:
    """The text form of the review, appended to the plan."""
    cost, rails = document.get("cost"), document.get("guardrails")
    if cost is None or rails is None:
        return []
    out = ["", "Cost per hour while every machine runs (estimate; no price is guessed):"]
    out += [f"    {name}: {job['text']}" for name, job in cost["jobs"].items()]
    out.append(f"    stack: {cost['stack']['text']}")
    out += [f"    prices: {line}" for line in cost["sources"]]
    declared = ", ".join(f"{k} {_text(v)}" for k, v in rails["declared"].items()) or "none declared"
    out += ["", f"Guardrails ({GUARDRAILS_KEY}): {declared}; fixed rules: {', '.join(rails['fixedRules'])}"]
    problems = rails["problems"]
    out.append(f"    {len(problems)} broken (see below)" if problems else "    all hold")
    return out


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
