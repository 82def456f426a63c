"""`gcp-training-jobs spend --stack NAME`: what a stack's jobs have cost, per job, per label value and in all.

Every job of the stack the API holds (its resources' jobs now and their history), each at the time it ran within
the window (`--since`, default 30d: from then to now) times the rate it ran at: its machines and accelerators as
the job holds them, in its region, on demand or at Spot rates as its strategy is billed (review.run_cost, from the
active price table). A job whose price is not known in full is "unknown (at least $X)", never guessed, and so are
the sums it is part of.

A persistent resource the stack declares or its jobs name (live.resources.stack_resources, the read `status`
shows) is spent for the time it existed within the window, its createTime to now (it bills while it exists, whatever
runs on it; a deleted one the API no longer holds, and its time is not counted, said so), at its machines' on-demand
rate as `plan` prices it (review.cost.estimate_resource: under autoscaling at the most, maxReplicaCount, an upper
bound); the jobs on it add $0/h. Its labels place it in `--by`'s groups like a job.

Each job's figure is rounded to the cent first and the sums are of those figures, so the per-job lines, the
per-label lines (`--by LABEL`: the jobs by their value of that label, "(none)" without it) and the stack's total
add up exactly. `--json` and `--csv` print the same (CSV: one row per job, for a FinOps sheet).

Exit 0; 2 for an unknown stack or an API that answers an error; 1 for an invalid stack file.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.cli.job_args import start_of
from gcp_training_jobs.cli.live.jobs import (
    FoundJob,
    Stack,
    find_jobs,
    open_stack,
    reported,
)
from gcp_training_jobs.cli.live.resources import HeldResource, stack_resources
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import EXIT_OK, TUNING
from gcp_training_jobs.jobspec.review.cost import estimate_resource
from gcp_training_jobs.jobspec.review.cost_text import RATE_WORDS, table_line
from gcp_training_jobs.jobspec.review.money import Amount, usd, usd_total
from gcp_training_jobs.jobspec.review.run_cost import WHAT_IT_IS, WHAT_IT_IS_NOT, run_cost, run_seconds
from gcp_training_jobs.jobspec.translate.persistent import api_facts
from gcp_training_jobs.resources.settings.budget import month_start

NO_VALUE = "(none)"
#: A job's rate on a SPECIFIC_RESERVATION: the reservation pays its machines, the job adds Vertex AI's fee.
RESERVATION_RATE = "reservation"
CENT = Decimal("0.01")


def cmd_spend(args: argparse.Namespace) -> int:
    return run_spend(args, now=lambda: datetime.now(UTC))


def cents_of(amount: Amount) -> Decimal:
    """Its known USD rounded to the cent: each figure is, before any sum."""
    return Decimal(repr(amount.known)).quantize(CENT, ROUND_HALF_UP)


@dataclass(frozen=True)
class Spent:
    """One row of the spend: what a job (job_spend) or a persistent resource (resource_spend) cost in the window."""

    named: dict[str, Any]
    """What names it, first in its row: a job's name, jobId, state, region and createTime; a persistent resource's
    id, name, state, region, declared and createTime."""
    labels: dict[str, str]
    amount: Amount
    """What it cost in the window, its parts without a price said."""
    hours: float
    usd_per_hour: float
    rate: str
    how: str
    """How its hours were counted."""
    what: str
    """What its figure is (WHAT_IT_IS, WHAT_IT_IS_RESOURCE)."""
    on_it: tuple[str, ...] | None = None
    """A persistent resource's: the jobs found on it."""
    least_usd_per_hour: float | None = None
    """A persistent resource's that autoscales: its machines' rate at the least (minReplicaCount)."""

    @property
    def cents(self) -> Decimal:
        return cents_of(self.amount)

    @property
    def complete(self) -> bool:
        return self.amount.complete

    def row(self, by: str | None) -> dict[str, Any]:
        row: dict[str, Any] = {
            **self.named, "rate": self.rate, "usdPerHour": round(self.usd_per_hour, 4), "hours": round(self.hours, 4),
            "costUsd": float(self.cents), "complete": self.complete,
            "unknown": list(dict.fromkeys(self.amount.unknown)), "labels": self.labels,
        }
        if self.on_it is not None:
            row["jobs"] = list(self.on_it)
        row |= {"hoursCounted": self.how, "is": self.what, "isNot": WHAT_IT_IS_NOT}
        if self.least_usd_per_hour is not None:
            row["usdPerHourAtLeast"] = round(self.least_usd_per_hour, 4)
        if by is not None:
            row["labelValue"] = self.labels.get(by, NO_VALUE)
        return row


def job_spend(job: FoundJob, start: datetime, now: datetime, table: PriceTable) -> Spent:
    """A job's spend over [start, now]: its run time at the rate it ran at (review.run_cost)."""
    cost = run_cost(_with_trials(job), job.facts, job.title, now, since=start, table=table)
    named = {"name": job.name, "jobId": job.job_id, "state": job.state, "region": job.target.region,
             "createTime": job.resource.get("createTime")}
    held = cost.estimate.reservation  # its machines paid by the reservation: the job adds the management fee
    if held is not None:
        named["reservation"] = held
    return Spent(named, job.labels, cost.amount, cost.hours, cost.rate.known,
                 RESERVATION_RATE if held is not None else cost.estimate.rate, cost.how, WHAT_IT_IS)


#: How a persistent resource's hours are counted, and what its rate is.
RESOURCE_HOURS = ("its createTime to now, within the window: a persistent resource is billed while it exists, "
                  "whatever runs on it (the jobs on it add $0/h)")
RESOURCE_GONE = ("not found: deleted, or never made; the API keeps no deleted resource, so its time before its delete "
                 "is not counted here")
#: What a persistent resource's figure is (spend --json says it per figure).
WHAT_IT_IS_RESOURCE = ("an estimate: the hours the persistent resource existed (its createTime to now) times its "
                       "machines' on-demand list price in the active price table (under autoscaling at the most, "
                       "maxReplicaCount: an upper bound)")


def resource_spend(held: HeldResource, start: datetime, now: datetime, table: PriceTable) -> Spent:
    """A persistent resource's spend over [start, now], priced as `plan` prices it (review.cost.estimate_resource,
    from its pools as the API answers them)."""
    resource = held.resource or {}
    given = resource.get("labels")
    labels = {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
    named = {"id": held.id, "name": resource.get("name"), "state": held.state, "region": held.region,
             "declared": held.declared, "createTime": resource.get("createTime")}
    if held.resource is None:
        return Spent(named, labels, Amount(0.0), 0.0, 0.0, "on_demand", RESOURCE_GONE, WHAT_IT_IS_RESOURCE, held.jobs)
    facts = api_facts(held.id, held.resource, held.region)
    seconds = run_seconds({"startTime": held.resource.get("createTime")}, now, since=start)
    if facts is None:
        rate, least = Amount(0.0, (f"persistent resource {held.id} (its resourcePools do not read)",)), None
    else:
        found = estimate_resource(facts, table)
        rate = found.on_demand
        least = found.least.on_demand.known if facts.autoscales else None
    return Spent(named, labels, rate.times(seconds / 3600), seconds / 3600, rate.known, "on_demand", RESOURCE_HOURS,
                 WHAT_IT_IS_RESOURCE, held.jobs, least)


def _sum(spent: list[Spent], held: list[Spent] | None = None) -> dict[str, Any]:
    figures = [*spent, *(held or [])]
    total = sum((s.cents for s in figures), Decimal(0))
    found: dict[str, Any] = {"costUsd": float(total), "complete": all(s.complete for s in figures),
                             "jobCount": len(spent)}
    if held:
        found["resourceCount"] = len(held)
    return found


def spend_document(stack: Stack, found: list[FoundJob], start: datetime, now: datetime,
                   by: str | None, resources: list[HeldResource] | None = None) -> dict[str, Any]:
    """The spend document of a stack's jobs and persistent resources (as stack_resources read them) over
    [start, now]."""
    table = prices.active_table()
    spent = [job_spend(job, start, now, table) for job in found]
    spent = [s for s in spent if s.hours > 0]  # a job that did not run in the window cost nothing in it
    held = [resource_spend(r, start, now, table) for r in resources or ()]
    counted = [r for r in held if r.hours > 0]
    document: dict[str, Any] = {
        "stack": stack.name, "project": stack.settings.project, "since": _stamp(start), "until": _stamp(now),
        "prices": table_line(table), "jobs": [s.row(by) for s in spent], **_sum(spent, counted),
        "is": WHAT_IT_IS, "isNot": WHAT_IT_IS_NOT,
    }
    if held:
        document["persistentResources"] = [r.row(by) for r in held]
    if (budget := _budget(stack, found, now, table)) is not None:  # a stack without one: no budget section
        document["budget"] = budget
    if by is not None:
        groups: dict[str, tuple[list[Spent], list[Spent]]] = {}
        for s in spent:
            groups.setdefault(s.labels.get(by, NO_VALUE), ([], []))[0].append(s)
        for r in counted:
            groups.setdefault(r.labels.get(by, NO_VALUE), ([], []))[1].append(r)
        document["byLabel"] = {"label": by, "groups": [{"value": value, **_sum(*members)}
                                                       for value, members in sorted(groups.items())]}
    return document


def _budget(stack: Stack, found: list[FoundJob], now: datetime, table: PriceTable) -> dict[str, Any] | None:
    """The month so far (from the budget's month start, UTC-8) against `gcp-training-jobs:budget`, or None."""
    budget = stack.settings.budget
    if budget is None:
        return None
    start = month_start(now)
    costs = [run_cost(_with_trials(job), job.facts, job.title, now, since=start, table=table).amount for job in found]
    total = sum((cents_of(c) for c in costs), Decimal(0))
    return {"monthlyUsd": budget.monthly_usd, "since": _stamp(start), "costUsd": float(total),
            "complete": all(c.complete for c in costs)}


def _with_trials(job: FoundJob) -> dict[str, Any]:
    """A tuning job as the API's get answers it (a list's answer leaves its trials out), else as listed."""
    if job.facts.kind != TUNING or "trials" in job.resource or not job.resource.get("name"):
        return job.resource
    try:
        got = Jobs(job.backend, job.target).get(str(job.resource["name"]))
    except TrainingJobsError:
        return job.resource  # counted as run time x parallel trials, and said so
    return got if got is not None else job.resource


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _money(cost: float, complete: bool) -> str:
    return usd_total(cost) if complete else f"unknown (at least {usd_total(cost)})"


def _rate_words(job: dict[str, Any]) -> str:
    """`on-demand`, `Spot`, or `on reservation R: the management fee` (its machines paid by the reservation)."""
    if job["rate"] == RESERVATION_RATE:
        return f"on reservation {job.get('reservation')}: Vertex AI's management fee, its machines paid by the " \
               "reservation"
    return RATE_WORDS.get(job["rate"], job["rate"])


def spend_lines(document: dict[str, Any]) -> list[str]:
    """The spend document as text."""
    jobs = document["jobs"]
    head = f"spend of stack {document['stack']} (project {document['project']}) from {document['since']} to " \
           f"{document['until']}: run time x the rate each job ran at (an estimate; prices: {document['prices']})"
    held = document.get("persistentResources", [])
    if not jobs and not any(r["hours"] for r in held):
        return [head, "  no job of the stack ran in that time", *_gone_lines(held), *_budget_line(document)]
    lines = [head]
    for job in jobs:
        title = job["name"] or f"({job['jobId']}: not in the stack file)"
        lines.append(f"  {title} {job['jobId']} {job['state']} {job['region']}: {job['hours']:.2f} h x "
                     f"{usd(job['usdPerHour'])} ({_rate_words(job)}) = "
                     f"{_money(job['costUsd'], job['complete'])}")
        if not job["complete"]:
            lines.append(f"      no price for {'; '.join(job['unknown'])}")
    for item in held:
        if not item["hours"]:
            continue
        on = ", ".join(item["jobs"]) or "none"
        lines.append(f"  persistent resource {item['id']} {item['state']} {item['region']}: {item['hours']:.2f} h x "
                     f"{usd(item['usdPerHour'])} (on demand, while it exists; jobs on it: {on}, $0.00/h) = "
                     f"{_money(item['costUsd'], item['complete'])}")
        if not item["complete"]:
            lines.append(f"      no price for {'; '.join(item['unknown'])}")
    lines += _gone_lines(held)
    if "byLabel" in document:
        lines.append(f"by label {document['byLabel']['label']}:")
        lines += [f"  {g['value']}: {_money(g['costUsd'], g['complete'])} ({_count(g)})"
                  for g in document["byLabel"]["groups"]]
    lines.append(f"stack {document['stack']}: {_money(document['costUsd'], document['complete'])} "
                 f"({_count(document)})")
    return lines + _budget_line(document)


def _budget_line(document: dict[str, Any]) -> list[str]:
    """`budget: $412.30 this month (since ...) of the $2,000.00 monthly budget (...)`, with a budget."""
    budget = document.get("budget")
    if not budget:
        return []
    return [f"budget: {_money(budget['costUsd'], budget['complete'])} this month (since {budget['since']}) of the "
            f"{usd_total(budget['monthlyUsd'])} monthly budget (this estimate; Google's figure reaches the budget "
            "within about a day)"]


def _gone_lines(held: list[dict[str, Any]]) -> list[str]:
    return [f"  persistent resource {r['id']} {r['region']}: {r['hoursCounted']}" for r in held
            if r["state"] == "NOT_FOUND"]


def _count(sums: dict[str, Any]) -> str:
    """`3 jobs`, `1 job and 1 persistent resource`."""
    jobs = f"{sums['jobCount']} job{'s' if sums['jobCount'] != 1 else ''}"
    held = sums.get("resourceCount", 0)
    return f"{jobs} and {held} persistent resource{'s' if held != 1 else ''}" if held else jobs


CSV_FIELDS = ("stack", "name", "job_id", "state", "region", "create_time", "rate", "usd_per_hour", "hours", "cost_usd",
              "complete")


def write_csv(document: dict[str, Any], by: str | None) -> None:
    """One row per job (and the label's value, with --by)."""
    fields = [*CSV_FIELDS, *([f"label:{by}"] if by else [])]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(fields)
    for job in document["jobs"]:
        writer.writerow([document["stack"], job["name"] or "", job["jobId"], job["state"], job["region"],
                         job["createTime"] or "", job["rate"], job["usdPerHour"], job["hours"],
                         f"{job['costUsd']:.2f}", str(job["complete"]).lower(),
                         *([job["labelValue"]] if by else [])])
    for held in document.get("persistentResources", []):  # a row each, so the rows add up to the stack's total
        if held["hours"]:
            writer.writerow([document["stack"], f"persistent resource {held['id']}", held["name"] or "",
                             held["state"], held["region"], held["createTime"] or "", held["rate"],
                             held["usdPerHour"], held["hours"], f"{held['costUsd']:.2f}",
                             str(held["complete"]).lower(), *([held["labelValue"]] if by else [])])


def run_spend(args: argparse.Namespace, *, now: Callable[[], datetime],
              sleep: Callable[[float], None] = time.sleep) -> int:
    try:
        stack = open_stack(args.stack, args.stacks_dir, args.endpoint)
        found = find_jobs(stack, args.organization, sleep)
        held = stack_resources(stack, found)
        when = now()
        document = spend_document(stack, found, start_of(args.since, when), when, args.by, held)
    except (TrainingJobsError, OSError) as error:
        return reported("spend", error)
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        print()
    elif args.csv:
        write_csv(document, args.by)
    else:
        print("\n".join(spend_lines(document)))
    return EXIT_OK
