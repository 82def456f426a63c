"""`gcp-training-jobs status --stack NAME` (or `--all`): every job of a stack, read from the API.

Per job (its resource's job now; the older ones are its history): its name, id, region and state; its accelerators
and machines (as the job holds them: after a fallback, the ones it got); when it started and how long it has run;
which run of the same spec it is (attempt N, where there were earlier ones) and where a fallback or a retry made
it (its `pulumi-placement` and `pulumi-retry` labels, job_model.runs); what it has cost so far (run time x
the rate it runs at: review.run_cost); its console URL; whether the stack's state still holds it (live/state.py: a
job of a destroyed stack or a removed resource is marked so). Up to TABLE_AFTER jobs are shown in detail, more as
a table, a job a line (`--wide`: always in detail). `--json` prints the same as one document.

Exit 0 when no job FAILED (a PAUSED job, stopped until someone resumes it, is shown as such and fails nothing), 1
when one did (or a stack file is invalid), 2 when a stack cannot be read (an unknown
stack, an unreadable file, an API that answers an error).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.job_args import TABLE_AFTER
from gcp_training_jobs.cli.live.jobs import (
    FoundJob,
    Stack,
    current_jobs,
    find_jobs,
    open_stack,
    reported,
    stacks_in,
)
from gcp_training_jobs.cli.live.resources import resource_lines, resources_status
from gcp_training_jobs.cli.live.state import StackState, read_state
from gcp_training_jobs.jobspec.catalog.credentials import masked
from gcp_training_jobs.jobspec.catalog.prices import PriceTableError
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import (
    CANCELLED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNREADABLE,
    FAILED,
    PAUSED_STATES,
    VERTEX,
)
from gcp_training_jobs.jobspec.review.cost_text import runs_as
from gcp_training_jobs.jobspec.review.money import usd, usd_total
from gcp_training_jobs.jobspec.review.run_cost import RunCost, run_cost
from gcp_training_jobs.resources.fallbacks import placement_of
from gcp_training_jobs.resources.job_model.runs import placement_index, retry_number
from gcp_training_jobs.resources.settings import find_project_root
from gcp_training_jobs.resources.settings.placement import CHEAPEST


def cmd_status(args: argparse.Namespace) -> int:
    return run_status(args, now=lambda: datetime.now(UTC))


def run_status(args: argparse.Namespace, *, now: Callable[[], datetime],
               sleep: Callable[[float], None] = time.sleep) -> int:
    names = stacks_in(args.stacks_dir) if args.all else [args.stack]
    if not names:
        print("status: no stack file in the stacks folder", file=sys.stderr)
        return EXIT_UNREADABLE
    code, documents = EXIT_OK, []
    for name in names:
        try:
            stack = open_stack(name, args.stacks_dir, args.endpoint)
            state = read_state(stack.name, find_project_root(stack.path.resolve().parent) or Path.cwd())
            jobs = current_jobs(find_jobs(stack, args.organization, sleep, declared=state.jobs))
            document = stack_status(stack, jobs, now(), state)
            if stack.settings.backend == VERTEX:  # Vertex AI's persistent resources: the stack's, and its jobs'
                document["persistentResources"] = resources_status(stack, jobs)
        except (TrainingJobsError, OSError) as error:
            code = max(code, reported(f"status: stack {name}", error))
            continue
        documents.append(document)
        if not args.json:
            wide = getattr(args, "wide", False) or len(document["jobs"]) <= TABLE_AFTER
            lines = status_lines(document) if wide else table_lines(document)
            print("\n".join(lines + resource_lines(document.get("persistentResources", []))))
        if document["failed"]:
            code = max(code, EXIT_INVALID)
    if args.json and documents:
        json.dump(documents if args.all else documents[0], sys.stdout, indent=2)
        print()
    return code


def job_status(job: FoundJob, when: datetime, state: StackState | None = None,
               cheapest: bool = False) -> dict[str, Any]:
    """One job as `status --json` shows it (`state`: the stack's state, as read)."""
    outputs = job.outputs
    found: RunCost | None = None
    cost: dict[str, Any] = {"usd": None, "complete": False, "usdPerHour": None, "runsAs": None, "unknown": []}
    facts = job.facts  # read once, by the same translation as a job's own (a body that does not read: named once)
    try:
        found = run_cost(job.resource, facts, job.title, when)
    except PriceTableError as error:  # a broken refreshed table: said, and the rest is still shown
        cost["unknown"] = [str(error)]
    if found is not None:
        amount, hourly = found.amount, found.estimate.hourly
        cost = {"usd": round(amount.known, 2), "complete": amount.complete, "usdPerHour": round(hourly.known, 4),
                "runsAs": runs_as(found.estimate), "unknown": list(dict.fromkeys(amount.unknown))}
    resource_name = job.backend.name_of(job.target, job.job_id, job.resource)
    return {
        "name": job.name, "jobId": job.job_id, "resourceName": resource_name,
        "apiId": resource_name.rsplit("/", 1)[-1],  # what Vertex AI, gcloud and the emulator's controls take
        "region": job.target.region, "state": job.state, "backendState": job.resource.get("state"),
        "accelerators": facts.accelerator_totals, "holds": facts.machines_text(), "parallelRuns": facts.parallel_runs,
        "persistentResource": facts.on_persistent_resource,
        "machines": [{"machineType": p.machine_type, "machines": p.machines * facts.parallel_runs,
                      "role": p.role or f"pool {p.index}"} for p in facts.running],
        "createTime": outputs.get("createTime"), "startTime": outputs.get("startTime"),
        "endTime": outputs.get("endTime"), "runSeconds": round(found.seconds) if found else None,
        "attempt": job.attempt, "placement": placement_index(job.resource), "retry": retry_number(job.resource),
        "placedAt": placement_of(placement_index(job.resource), facts),  # as the job's `placement` output says it
        "placementCheapest": cheapest,
        "earlier": [{"jobId": j.job_id, "state": j.state, "region": j.target.region} for j in job.history],
        "cost": cost, "errorMessage": masked(outputs.get("errorMessage")).value,  # a credential it echoes: masked
        "consoleUrl": outputs.get("consoleUrl"),
        "inStackFile": job.in_stack_file, "namedBy": job.named_by or None,
        "inState": state.holds(job.name, job.job_id) if state is not None and state.read else None,
    }


def stack_status(stack: Stack, jobs: list[FoundJob], when: datetime, state: StackState | None = None
                 ) -> dict[str, Any]:
    """A stack's status document: its jobs now, the ones its file or its state declares that the API does not hold,
    the sum, and whether the state was read (`stateUnread`: why not)."""
    state = state if state is not None else StackState(unread="not asked")
    cheapest = {name for name, spec in stack.settings.jobs.items() if spec.placement == CHEAPEST}
    shown = [job_status(job, when, state, job.name in cheapest) for job in jobs]
    missing = sorted((set(stack.settings.jobs) | set(state.jobs)) - {job.name for job in jobs if job.name})
    total = sum(j["cost"]["usd"] or 0.0 for j in shown)
    return {
        "stack": stack.name, "file": str(stack.path), "backend": stack.settings.backend,
        "project": stack.settings.project, "asOf": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "jobs": shown,
        "notFound": missing, "failed": [j["name"] or j["jobId"] for j in shown if j["state"] == FAILED],
        "paused": [j["name"] or j["jobId"] for j in shown if j["state"] in PAUSED_STATES],
        "costUsd": round(total, 2), "costComplete": all(j["cost"]["complete"] for j in shown),
        "stateRead": state.read, "stateUnread": state.unread,
        "notInState": [j["name"] or j["jobId"] for j in shown if j["inState"] is False],
    }


def duration_text(seconds: float) -> str:
    """`45 s`, `12 min`, `3 h 05 min`, `2 d 4 h`."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def status_lines(document: dict[str, Any]) -> list[str]:
    """The status document as text, one block per job."""
    jobs = document["jobs"]
    head = f"stack {document['stack']} ({document['backend']}, project {document['project']})"
    if not jobs and not document["notFound"]:
        return [f"{head}: no jobs (its stack file declares none, and the API holds none of its)"]
    failed = f", {len(document['failed'])} FAILED" if document["failed"] else ""
    failed += f", {len(document['paused'])} PAUSED" if document["paused"] else ""
    total = usd_total(document["costUsd"]) + ("" if document["costComplete"] else " known (some prices unknown)")
    lines = [f"{head}: {len(jobs)} job{'s' if len(jobs) != 1 else ''}{failed}; cost so far {total}, as of "
             f"{document['asOf']}"] + _state_lines(document)
    for job in jobs:
        api_id = f"id {job['apiId']}, " if job["apiId"] != job["jobId"] else ""
        lines += [f"  {_title(job)}: {job['state']}{_gone(job)} (job {job['jobId']}, {api_id}{job['region']})"]
        lines += [f"      {line}" for line in _job_lines(job)]
    return lines + _missing_lines(document)


def table_lines(document: dict[str, Any]) -> list[str]:
    """The status document as a table, a job a line: name, state, region, machines and accelerators, $/h, started
    (`--wide`: status_lines)."""
    jobs = document["jobs"]
    failed = f", {len(document['failed'])} FAILED" if document["failed"] else ""
    total = usd_total(document["costUsd"]) + ("" if document["costComplete"] else " known (some prices unknown)")
    lines = [f"stack {document['stack']} ({document['backend']}, project {document['project']}): {len(jobs)} jobs"
             f"{failed}; cost so far {total}, as of {document['asOf']} (--wide: each job in detail)"]
    rows = [("NAME", "STATE", "REGION", "MACHINES AND ACCELERATORS", "$/H", "STARTED")] + [
        (_title(job), job["state"] + _gone(job), str(job["region"]), _holds(job),
         usd(job["cost"]["usdPerHour"]) if job["cost"]["usdPerHour"] is not None else "unknown",
         job["startTime"] or "not started") for job in jobs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
              for row in rows]
    return lines + _state_lines(document) + _missing_lines(document)


def _title(job: dict[str, Any]) -> str:
    return job["name"] if job["inStackFile"] else f"{job['name'] or job['jobId']} (not in the stack file)"


def _gone(job: dict[str, Any]) -> str:
    """The mark of a job the stack's state no longer holds (destroyed, or its resource removed)."""
    return ", no longer in the stack's state" if job["inState"] is False else ""


def _holds(job: dict[str, Any]) -> str:
    """`machines: g2-standard-8 x1 + 1 NVIDIA_L4`, a tuning job's times its trials at once (JobFacts.machines_text),
    and the accelerators in all, as plan says them."""
    accelerators = ", ".join(f"{n} {kind}" for kind, n in job["accelerators"].items())
    return job["holds"] + (f" ({accelerators} in all)" if accelerators and job["parallelRuns"] > 1 else "")


def _state_lines(document: dict[str, Any]) -> list[str]:
    if not document["stateRead"]:
        return [f"  the stack's state was not read ({document['stateUnread']}): no job is marked as in it or not"]
    return []


def _missing_lines(document: dict[str, Any]) -> list[str]:
    return [f"  {name}: not found in the API (not created yet, or its job was deleted)"
            for name in document["notFound"]]


def _job_lines(job: dict[str, Any]) -> list[str]:
    accelerators = ", ".join(f"{n} {kind}" for kind, n in job["accelerators"].items()) or "none"
    lines = [f"machines: {job['holds']}; accelerators: {accelerators}"]
    cost = job["cost"]
    if cost["usdPerHour"] is None:
        money = f"cost so far unknown ({'; '.join(cost['unknown'])})"
    elif cost["complete"]:
        money = f"cost so far {usd_total(cost['usd'])} ({usd(cost['usdPerHour'])}, {cost['runsAs']})"
    else:
        money = (f"cost so far unknown (at least {usd_total(cost['usd'])}; no price for "
                 f"{'; '.join(cost['unknown'])})")
    if job["startTime"]:
        ran = "ran" if job["endTime"] else "running for"
        lines.append(f"started {job['startTime']}, {ran} {duration_text(job['runSeconds'] or 0)}; {money}")
    else:
        lines.append(f"created {job['createTime']}, not started; {money}")
    history = [f"attempt {job['attempt']} of this spec"] if job["attempt"] > 1 else []
    placed = job["placedAt"]
    if job["placementCheapest"]:
        history.append(f"candidate {job['placement'] + 1} of placement: cheapest ({placed['region']} "
                       f"{placed['strategy']})")
    elif job["placement"]:
        history.append(f"placement {job['placement']} (fallbacks[{job['placement'] - 1}], not the job as written)")
    if job["retry"]:
        history.append(f"retry {job['retry']} (made again after a failure of Google's)")
    if job["earlier"]:
        history.append("earlier jobs: " + ", ".join(f"{e['jobId']} {e['state']} ({e['region']})"
                                                    for e in job["earlier"]))
    if history:
        lines.append("; ".join(history))
    if job["errorMessage"] and job["state"] in (FAILED, CANCELLED):
        lines.append(f"error: {job['errorMessage']}")
    lines.append(f"console: {job['consoleUrl']}")
    return lines
