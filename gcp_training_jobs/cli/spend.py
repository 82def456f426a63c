"""`gcp-training-jobs spend --stack NAME`: what a stack's jobs have cost, per job, per label value and in all.

Every job of the stack the API holds (its resources' jobs now and their history), each at the time it ran within
the window (`--since`, default 30d: from then to now) times the rate it ran at: its machines and accelerators as
the job holds them, in its region, on demand or at Spot rates as its strategy is billed (review.run_cost, from the
active price table). A job whose price is not known in full is "unknown (at least $X)", never guessed, and so are
the sums it is part of.

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

from gcp_training_jobs.cli.job_args import start_of
from gcp_training_jobs.cli.stack_jobs import (
    FoundJob,
    Stack,
    find_jobs,
    open_stack,
    reported,
)
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import EXIT_OK
from gcp_training_jobs.jobspec.review.cost_text import RATE_WORDS, table_line
from gcp_training_jobs.jobspec.review.money import usd, usd_total
from gcp_training_jobs.jobspec.review.run_cost import run_cost
from gcp_training_jobs.resources.settings.budget import month_start

NO_VALUE = "(none)"
CENT = Decimal("0.01")


def cmd_spend(args: argparse.Namespace) -> int:
    return run_spend(args, now=lambda: datetime.now(UTC))


@dataclass(frozen=True)
class Spent:
    """One job's spend in the window."""

    job: FoundJob
    cents: Decimal
    """Its known USD, rounded to the cent."""
    complete: bool
    unknown: tuple[str, ...]
    hours: float
    usd_per_hour: float
    rate: str

    def row(self, by: str | None) -> dict[str, Any]:
        row: dict[str, Any] = {
            "name": self.job.name, "jobId": self.job.job_id, "state": self.job.state, "region": self.job.target.region,
            "createTime": self.job.resource.get("createTime"), "rate": self.rate,
            "usdPerHour": round(self.usd_per_hour, 4), "hours": round(self.hours, 4), "costUsd": float(self.cents),
            "complete": self.complete, "unknown": list(self.unknown), "labels": self.job.labels,
        }
        if by is not None:
            row["labelValue"] = self.job.labels.get(by, NO_VALUE)
        return row


def _sum(spent: list[Spent]) -> dict[str, Any]:
    total = sum((s.cents for s in spent), Decimal(0))
    return {"costUsd": float(total), "complete": all(s.complete for s in spent), "jobCount": len(spent)}


def spend_document(stack: Stack, found: list[FoundJob], start: datetime, now: datetime,
                   by: str | None) -> dict[str, Any]:
    """The spend document of a stack's jobs over [start, now]."""
    table = prices.active_table()
    spent = []
    for job in found:
        cost = run_cost(job.resource, job.facts, job.title, now, since=start, table=table)
        amount = cost.amount
        spent.append(Spent(job, Decimal(repr(amount.known)).quantize(CENT, ROUND_HALF_UP), amount.complete,
                           tuple(dict.fromkeys(amount.unknown)), cost.hours, cost.estimate.hourly.known,
                           cost.estimate.rate))
    spent = [s for s in spent if s.hours > 0]  # a job that did not run in the window cost nothing in it
    document: dict[str, Any] = {
        "stack": stack.name, "project": stack.settings.project, "since": _stamp(start), "until": _stamp(now),
        "prices": table_line(table), "jobs": [s.row(by) for s in spent], **_sum(spent),
    }
    if (budget := _budget(stack, found, now, table)) is not None:  # a stack without one: the document as before
        document["budget"] = budget
    if by is not None:
        groups: dict[str, list[Spent]] = {}
        for s in spent:
            groups.setdefault(s.job.labels.get(by, NO_VALUE), []).append(s)
        document["byLabel"] = {"label": by, "groups": [{"value": value, **_sum(members)}
                                                       for value, members in sorted(groups.items())]}
    return document


def _budget(stack: Stack, found: list[FoundJob], now: datetime, table: Any) -> dict[str, Any] | None:
    """The month so far (from the budget's month start, UTC-8) against `gcp-training-jobs:budget`, or None."""
    budget = stack.settings.budget
    if budget is None:
        return None
    start = month_start(now)
    costs = [run_cost(job.resource, job.facts, job.title, now, since=start, table=table).amount for job in found]
    cents = sum((Decimal(repr(c.known)).quantize(CENT, ROUND_HALF_UP) for c in costs), Decimal(0))
    return {"monthlyUsd": budget.monthly_usd, "since": _stamp(start), "costUsd": float(cents),
            "complete": all(c.complete for c in costs)}


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _money(cost: float, complete: bool) -> str:
    return usd_total(cost) if complete else f"unknown (at least {usd_total(cost)})"


def spend_lines(document: dict[str, Any]) -> list[str]:
    """The spend document as text."""
    jobs = document["jobs"]
    head = f"spend of stack {document['stack']} (project {document['project']}) from {document['since']} to " \
           f"{document['until']}: run time x the rate each job ran at (an estimate; prices: {document['prices']})"
    if not jobs:
        return [head, "  no job of the stack ran in that time", *_budget_line(document)]
    lines = [head]
    for job in jobs:
        title = job["name"] or f"({job['jobId']}: not in the stack file)"
        lines.append(f"  {title} {job['jobId']} {job['state']} {job['region']}: {job['hours']:.2f} h x "
                     f"{usd(job['usdPerHour'])} ({RATE_WORDS.get(job['rate'], job['rate'])}) = "
                     f"{_money(job['costUsd'], job['complete'])}")
        if not job["complete"]:
            lines.append(f"      no price for {'; '.join(job['unknown'])}")
    if "byLabel" in document:
        lines.append(f"by label {document['byLabel']['label']}:")
        lines += [f"  {g['value']}: {_money(g['costUsd'], g['complete'])} ({_jobs(g['jobCount'])})"
                  for g in document["byLabel"]["groups"]]
    lines.append(f"stack {document['stack']}: {_money(document['costUsd'], document['complete'])} "
                 f"({_jobs(document['jobCount'])})")
    return lines + _budget_line(document)


def _budget_line(document: dict[str, Any]) -> list[str]:
    """`budget: $412.30 this month (since ...) of the $2,000.00 monthly budget (...)`, with a budget."""
    budget = document.get("budget")
    if not budget:
        return []
    return [f"budget: {_money(budget['costUsd'], budget['complete'])} this month (since {budget['since']}) of the "
            f"{usd_total(budget['monthlyUsd'])} monthly budget (this estimate; Google's figure reaches the budget "
            "within about a day)"]


def _jobs(count: int) -> str:
    return f"{count} job{'s' if count != 1 else ''}"


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


def run_spend(args: argparse.Namespace, *, now: Callable[[], datetime],
              sleep: Callable[[float], None] = time.sleep) -> int:
    try:
        stack = open_stack(args.stack, args.stacks_dir, args.endpoint)
        found = find_jobs(stack, args.organization, sleep)
        when = now()
        document = spend_document(stack, found, start_of(args.since, when), when, args.by)
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
