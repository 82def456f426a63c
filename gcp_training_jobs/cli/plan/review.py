"""The review part of `plan`, as data: what the stack's jobs cost (per hour, on demand and Spot, at the rate each
runs at, and at worst), whether the stack keeps its guardrails, and what it asks of Vertex AI's quotas per region
(plan/text.py shows it).

Cost and guardrails are judged on the bodies the backends would send (gcp_training_jobs.jobspec.review.cost and
.guardrails, through the settings' rendered jobs), the fixed bucket and IAM rules on the resources the
program registered under the mocks: the same functions the policy pack runs under `pulumi preview`. Every
estimate reads one price table (the active one: a refreshed table, else the bundled snapshot); a table whose
oldest prices are more than 180 days old makes the review warn, with the refresh command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.review.cost import Estimate, ResourceEstimate, StackEstimate
from gcp_training_jobs.jobspec.review.cost_text import (
    candidate_text,
    estimate_text,
    part_text,
    reservation_text,
    resource_text,
    runs_as,
    source_lines,
    stack_text,
    stale_warning,
    worst_case_text,
)
from gcp_training_jobs.jobspec.review.guardrails import RULE_END_OF_LIFE, budget_text, stack_estimate
from gcp_training_jobs.jobspec.review.money import Amount
from gcp_training_jobs.jobspec.review.reservations import Need
from gcp_training_jobs.jobspec.rules.tasks import today as today_of_rules
from gcp_training_jobs.resources.plugins import gcp_plugin, gcp_resources_of
from gcp_training_jobs.resources.resource_rules import RULE_ADDITIVE_IAM, RULE_PRIVATE_BUCKETS, resource_problems
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.guardrails import falling_back, guardrail_problems_of, stack_facts
from gcp_training_jobs.resources.settings.placements import placed
from gcp_training_jobs.resources.settings.quota import reservation_takers

FIXED_RULES = (RULE_END_OF_LIFE, RULE_PRIVATE_BUCKETS, RULE_ADDITIVE_IAM)


@dataclass
class Review:
    """A stack's cost estimate, its declared guardrails and what breaks them."""

    cost: StackEstimate
    declared: dict[str, Any]
    problems: list[Problem]
    warnings: list[str]
    quota: dict[str, dict[str, dict[str, Any]]]
    """What the stack asks of Vertex AI's quotas, per region and metric, and by whom (plan/quota.quota_asked)."""
    budget: dict[str, Any] | None = None
    """The monthly budget against the stack's worst case (`gcp-training-jobs:budget`), or None without one."""
    reservations: dict[str, Any] | None = None
    """The reservations the stack's jobs name, not read offline (`reservations_named`); None when none is named."""
    plugins: list[dict[str, Any]] | None = None
    """The resource plugins the stack needs that the engine will not find (`plugins_missing`)."""


def review(settings: StackSettings, resources: Iterable[Any], today: date | None = None) -> Review:
    """Judge a stack: its jobs (guardrails, fixed job rules, cost) and its registered resources (fixed rules).

    `resources`: the program's registrations (anything with `.type`, `.name`, `.inputs`, `.custom`); `today`:
    the day the table's age is judged on (default: the rules' day). A broken price table file raises
    prices.PriceTableError (an UnreadableError naming the file).
    """
    from gcp_training_jobs.cli.plan.quota import quota_asked  # the quota client, loaded when a plan is judged

    today = today or today_of_rules()
    table = prices.active_table()
    jobs = stack_facts(settings)
    problems = guardrail_problems_of(settings, today, table)
    for reg in resources:
        if getattr(reg, "custom", True):
            problems += resource_problems(reg.type, reg.name, reg.inputs)
    cost = stack_estimate(jobs, table, settings.resources, falling_back(settings), placed(settings))
    declared = settings.guardrails.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    warning = stale_warning(table, today)
    return Review(cost, declared, list(dict.fromkeys(problems)), [warning] if warning else [], quota_asked(settings),
                  _budget(settings, cost), reservations_named(settings), plugins_missing(settings))


def _budget(settings: StackSettings, cost: StackEstimate) -> dict[str, Any] | None:
    """The budget as data: its amount, thresholds and enforcement, the stack's worst case and the line plan says."""
    if settings.budget is None:
        return None
    spec = settings.budget
    return {"monthlyUsd": spec.monthly_usd, "thresholds": list(spec.thresholds), "enforce": spec.enforce,
            "worstCaseUsd": _usd(cost.worst_case), "fits": cost.worst_case.complete
            and cost.worst_case.known <= spec.monthly_usd, "text": budget_text(cost.worst_case, spec.monthly_usd)}


def plugins_missing(settings: StackSettings) -> list[dict[str, Any]]:
    """pulumi-gcp's resource plugin when the stack registers resources it runs (plugins.gcp_resources_of: its
    persistent resources, its budget's) and the plugin is not where the engine looks
    (resources.plugins.gcp_plugin): its name, version, the command that installs it and the project's words, so
    that `plan` says it before `pulumi up` fails on it. Empty otherwise."""
    why = gcp_resources_of(settings)
    if why is None:
        return []
    plugin = gcp_plugin()
    if plugin.found is not None:
        return []
    return [{"name": plugin.name, "version": plugin.version, "install": plugin.install, "text": plugin.needed(why)}]


def reservations_named(settings: StackSettings) -> dict[str, Any] | None:
    """The reservations the stack's jobs name as written (settings.quota.reservation_takers), each with the machines
    each job takes from it, and the one line that says they are named, not checked, offline; None when no job names
    one."""
    stacked: dict[str, list[Need]] = {}
    for taker in reservation_takers(settings):
        for need in taker.needs:
            stacked.setdefault(need.named.written, []).append(need)
    if not stacked:
        return None
    named: dict[str, Any] = {}
    for written, needs in stacked.items():
        by: dict[str, int] = {}
        for need in needs:
            by[need.job] = by.get(need.job, 0) + need.machines
        named[written] = {"name": needs[0].named.name, "machineType": needs[0].machine_type,
                          "machines": sum(by.values()), "by": by}
    said = "; ".join(f"{r['name']} ({', '.join(f'{job} {n}' for job, n in r['by'].items())})" for r in named.values())
    return {"checked": False, "named": named,
            "text": f"named, not checked offline (`plan --online` reads each and holds the stack's jobs to it): {said}"}


def review_document(checked: Review) -> dict[str, Any]:
    """The review as data (keys `cost`, `guardrails` and `quota` of the plan document)."""
    cost = checked.cost
    table = cost.table
    return {
        "cost": {
            "jobs": {e.name: _job(e) for e in cost.jobs},
            "persistentResources": {r.name: _resource(r) for r in cost.resources},
            "stack": {"onDemand": _amount(cost.on_demand), "spot": _amount(cost.spot),
                      "atJobRates": _amount(cost.hourly), "worstCaseUsd": _usd(cost.worst_case),
                      "worstCase": _amount(cost.worst_case, per_hour=False), "text": stack_text(cost)},
            "table": {"kind": table.kind, "path": table.path, "date": table.date.isoformat(),
                      "oldest": table.oldest.isoformat()},
            "sources": source_lines(table),
            "warnings": list(checked.warnings),
        },
        "guardrails": {"declared": checked.declared, "fixedRules": list(FIXED_RULES),
                       "problems": [str(p) for p in checked.problems]},
        "quota": checked.quota,
        "budget": checked.budget,
        **({"reservations": checked.reservations} if checked.reservations else {}),
        **({"plugins": checked.plugins} if checked.plugins else {}),
    }


def _resource(r: ResourceEstimate) -> dict[str, Any]:
    """A persistent resource's cost: on demand per hour while it exists, at the least and the most (no worst case)."""
    most = r.most
    return {"region": r.region, "runsAt": "on_demand", "atLeast": _amount(r.least.on_demand),
            "atMost": _amount(most.on_demand), "onDemand": _amount(most.on_demand),
            "parts": [p.as_dict() for p in most.parts], "partLines": [part_text(p) for p in most.parts],
            "bases": list(r.bases), "text": resource_text(r)}


def _job(e: Estimate) -> dict[str, Any]:
    where: dict[str, Any] = {"persistentResource": e.on_resource} if e.on_resource else {}
    if e.reservation is not None:
        where["reservation"] = {"name": e.reservation, "machinesOnDemand": _amount(e.machines_on_demand),
                                "adds": _amount(e.hourly), "feeShare": prices.RESERVATION_FEE.share,
                                "text": reservation_text(e), "why": prices.RESERVATION_FEE.why}
    elif e.may_leave:
        where["reservation"] = {"name": None, "pricedOnDemand": e.may_leave}
    if e.written is not None:  # placement: cheapest: priced where it may run (review.cost.estimate_placed)
        dearest = e.worst_at or e
        where["candidate"] = {"region": e.region, "strategy": e.strategy or "STANDARD",
                              "written": {"region": e.written.region, "strategy": e.written.strategy or "STANDARD"},
                              "dearest": {"region": dearest.region, "strategy": dearest.strategy or "STANDARD",
                                          "usdPerHour": _usd(dearest.hourly)},
                              "text": candidate_text(e)}
    return {**where, "region": e.region, "strategy": e.strategy, "runsAt": e.rate, "rateBound": e.billing.get("bound"),
            "runsAs": runs_as(e), "onDemand": _amount(e.on_demand), "spot": _amount(e.spot),
            "atItsRate": _amount(e.hourly), "worstCaseUsd": _usd(e.worst_case),
            "worstCase": {**_amount(e.worst_case, per_hour=False), "hours": round(e.timeout.hours, 6),
                          "timeout": e.timeout.text(), "text": worst_case_text(e)},
            "parts": [p.as_dict() for p in e.parts], "partLines": [part_text(p) for p in e.parts],
            "bases": list(e.bases), "text": estimate_text(e)}


def _amount(amount: Amount, per_hour: bool = True) -> dict[str, Any]:
    known = "knownUsdPerHour" if per_hour else "knownUsd"
    return {known: round(amount.known, 6), "unknown": list(amount.unknown), "complete": amount.complete}


def _usd(amount: Amount) -> float | None:
    """A sum in USD when every part of it is priced, else None (`worstCase` says what is missing)."""
    return round(amount.known, 2) if amount.complete else None
