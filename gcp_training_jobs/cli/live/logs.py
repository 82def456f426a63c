"""`gcp-training-jobs logs --stack NAME JOB`: a job's log lines, from Cloud Logging (backends.cloud_logging).

JOB is a job's name in the stack (its job now: the newest the API holds) or a job id (an older one). The lines are
the job's entries as `gcloud ai custom-jobs stream-logs` finds them, one line each:
`TIMESTAMP SEVERITY TASK MESSAGE`. `--since` keeps the newer ones (`1h`, `2026-11-01`), `--tail N` the last N,
`--follow` goes on printing them as they come until the job has ended (then exits 1 when it ended FAILED). A
credential a trainer printed is shown as `<KIND, not shown>` (catalog.credentials.masked_text).

Exit 0; 1 when a followed job ended FAILED; 2 for an unknown stack or job, or an API that answers an error
(named, with its status).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from gcp_training_jobs.backends.cloud_logging import Reader, log_job_id
from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.backends.transport import ApiError, TransportError
from gcp_training_jobs.cli.job_args import start_of
from gcp_training_jobs.cli.live.jobs import (
    API_NAMES,
    FoundJob,
    StackJobsError,
    current_jobs,
    find_jobs,
    open_stack,
    reported,
)
from gcp_training_jobs.jobspec.catalog.credentials import masked_text
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_OK, FAILED, FINISHED_STATES

#: How often --follow reads new lines (gcloud's stream-logs polls every 60 s by default; a person watches).
POLL_SECONDS = 10.0


def cmd_logs(args: argparse.Namespace) -> int:
    return run_logs(args, now=lambda: datetime.now(UTC))


def pick(jobs: list[FoundJob], wanted: str, stack: str) -> FoundJob:
    """The stack's job named `wanted` (its newest), else the job with that id; StackJobsError naming the jobs."""
    for job in current_jobs(jobs):
        if job.name == wanted:
            return job
    for job in jobs:
        if wanted in (job.job_id, job.key, job.key.rsplit("/", 1)[-1]):
            return job
    names = sorted({job.name for job in jobs if job.name})
    raise StackJobsError(f"stack {stack} has no job {wanted!r}; its jobs: {', '.join(names) or 'none found'}")


def run_logs(args: argparse.Namespace, *, now: Callable[[], datetime],
             sleep: Callable[[float], None] = time.sleep, out: Callable[[str], None] = print) -> int:
    try:
        stack = open_stack(args.stack, args.stacks_dir, args.endpoint)
        job = pick(find_jobs(stack, args.organization, sleep), args.job, stack.name)
        reader = Reader(stack.settings.project, stack.endpoint, sleep=sleep)
        since = start_of(args.since, now()) if args.since is not None else None
        job_id = log_job_id(job.resource)
        if args.tail is not None:
            shown = reader.tail(job_id, args.tail, since=since, task=args.task)
        else:
            shown = reader.lines(job_id, since=since, task=args.task)
        for line in shown:
            out(masked_text(line.text()))  # a credential a trainer printed: masked
        if not args.follow:
            return EXIT_OK
        jobs = Jobs(job.backend, job.target, sleep=sleep)
        latest = job.resource

        def ended() -> bool:
            """Whether the job has ended (or is gone: a finished Vertex AI job deleted with its stack)."""
            nonlocal latest
            found = _get(jobs, job)
            latest = found or latest
            return found is None or job.backend.state(found) in FINISHED_STATES

        for line in reader.follow(job_id, ended, since=since, task=args.task, poll_seconds=POLL_SECONDS,
                                  start=shown):
            out(masked_text(line.text()))  # a credential a trainer printed: masked
        return EXIT_INVALID if job.backend.state(latest) == FAILED else EXIT_OK
    except (TrainingJobsError, OSError) as error:
        return reported("logs", error)


def _get(jobs: Jobs, job: FoundJob) -> dict[str, Any] | None:
    name = job.backend.name_of(job.target, job.job_id, job.resource)
    try:
        return jobs.get(name)
    except (ApiError, TransportError) as error:
        raise StackJobsError(f"{API_NAMES.get(job.backend.api, job.backend.api)} {error}") from None
