"""The command lines of `status`, `logs` and `spend` (the commands on a stack's jobs as the APIs hold them), of
`diff` (what a change does to the stacks), and the option values they share. Light: the commands' modules
(live: status, logs, spend, jobs; diff) load the judge, the settings and the backends, so main imports them only
when one of them runs, and `validate` still starts in a fraction of a second. None of them loads Pulumi; `diff`
runs the program under Pulumi's mocks (cli.plan.mocks), so it loads Pulumi when it plans."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from gcp_training_jobs.jobspec.core import endpoints
from gcp_training_jobs.jobspec.core.names import LABEL_KEY

#: What a self-managed Pulumi backend (file://, gs://, s3://, azblob://) reports as the organization.
DEFAULT_ORGANIZATION: Final = "organization"
#: `status` shows up to this many jobs in detail, more as a table, a job a line (`--wide`: always in detail).
TABLE_AFTER: Final = 5
#: --since: a span back from now (`30d`, `12h`, `90m`, `2w`, `45s`) or a day or time (`2026-11-01`, RFC 3339).
SINCE_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SINCE_ALLOWED: Final = "allowed: a span back from now (30d, 12h, 90m, 2w, 45s) or a day or time (2026-11-01, " \
                       "2026-11-01T09:00:00Z)"
#: A command: its parsed arguments in, its exit code out.
Command = Callable[[argparse.Namespace], int]


def since_type(text: str) -> timedelta | datetime:
    """The value of --since (an argparse type: a malformed one is a usage error naming what is allowed)."""
    match = re.fullmatch(r"(\d+)([smhdw])", text.strip())
    if match:
        return timedelta(seconds=int(match.group(1)) * SINCE_UNITS[match.group(2)])
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}; {SINCE_ALLOWED}") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def start_of(since: timedelta | datetime, now: datetime) -> datetime:
    """The time --since names, for a read made at `now`."""
    return now - since if isinstance(since, timedelta) else since


def count_type(text: str) -> int:
    """--tail N: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}; allowed: a whole number of lines, 0 or more")
    return value


def label_type(text: str) -> str:
    """--by LABEL: a label key."""
    if not LABEL_KEY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a label key; allowed: lowercase letters, digits, _ and "
                                         "-, starting with a letter, at most 63 characters")
    return text


def endpoint_type(text: str) -> str:
    """--endpoint: one of Google's API hosts over https, loopback, or a host $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS
    names (jobspec/core/endpoints.py); refused before anything runs, the endpoint printed without a password."""
    from gcp_training_jobs.jobspec.core.env import EnvError, env_settings  # pydantic: only when --endpoint is given

    try:
        hosts = env_settings().endpoint_hosts
    except EnvError:  # the command names the bad variable itself when it reads the environment
        hosts = ()
    problem = endpoints.refusal(text, hosts)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _stack_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stacks-dir", default=None, type=Path,
                        help="the folder of the stack files (default: Pulumi.yaml's stackConfigDir, as Pulumi finds "
                             "them)")
    parser.add_argument("--organization", default=DEFAULT_ORGANIZATION,
                        help="the Pulumi organization, which finds jobs made before they carried the stack label "
                             f"(default: {DEFAULT_ORGANIZATION}, what self-managed backends report; on Pulumi Cloud "
                             "your organization's name)")
    parser.add_argument("--endpoint", default=None, type=endpoint_type,
                        help="the API endpoint (default: the stack's apiEndpoint, else "
                             "$GCP_TRAINING_JOBS_API_ENDPOINT, else Google's)")


def add_parsers(sub: argparse._SubParsersAction, *, status: Command, logs: Command,  # type: ignore[type-arg]
                spend: Command) -> None:
    """status, logs and spend, each running its command (given: main imports them only when one runs)."""
    p = sub.add_parser("status", help="every job of a stack, read from the API: state, accelerators, run time, "
                                      "cost so far (exit 1 when one FAILED)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="the stack (stacks/Pulumi.NAME.yaml)")
    which.add_argument("--all", action="store_true", help="every stack with a file in the stacks folder")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.add_argument("--wide", action="store_true",
                   help=f"every job in detail (default: in detail up to {TABLE_AFTER} jobs, a table a job a line "
                        "beyond)")
    _stack_options(p)
    p.set_defaults(func=status)

    p = sub.add_parser("logs", help="a job's log lines from Cloud Logging (--follow until it ends)")
    p.add_argument("--stack", required=True, help="the stack (stacks/Pulumi.NAME.yaml)")
    p.add_argument("job", metavar="JOB", help="the job's name in the stack, or a job id")
    p.add_argument("--follow", "-f", action="store_true", help="go on printing new lines until the job has ended")
    p.add_argument("--since", type=since_type, default=None, help="only lines since then: 1h, 30m, 2d, 2026-11-01")
    p.add_argument("--tail", type=count_type, default=None, metavar="N", help="only the last N lines")
    p.add_argument("--task", default=None, help="only one replica's lines (e.g. workerpool0-0, master-replica-0)")
    _stack_options(p)
    p.set_defaults(func=logs)

    p = sub.add_parser("spend", help="what a stack's jobs have cost: per job, per label value, in all")
    p.add_argument("--stack", required=True, help="the stack (stacks/Pulumi.NAME.yaml)")
    p.add_argument("--since", type=since_type, default=timedelta(days=30),
                   help="the window's start: 30d (the default), 12h, 2026-11-01")
    p.add_argument("--by", type=label_type, default=None, metavar="LABEL", help="also sum per value of this job label")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the figures as JSON")
    form.add_argument("--csv", action="store_true", help="print one CSV row per job")
    _stack_options(p)
    p.set_defaults(func=spend)


def add_diff_parser(sub: argparse._SubParsersAction, *, diff: Command) -> None:  # type: ignore[type-arg]
    """diff, running its command (given: main imports it only when it runs)."""
    p = sub.add_parser("diff", help="what a change does to the stacks against a git ref, offline: each job added, "
                                    "removed, replaced or updated, its $/h and worst case before and after, the "
                                    "guardrails it breaks (exit 1 when the head breaks one the base kept)")
    p.add_argument("--base", required=True, metavar="REF", help="the branch, tag or commit to compare with (read "
                                                                "from git's objects, never checked out)")
    p.add_argument("--head", default=None, metavar="REF", help="the other side (default: the working tree)")
    p.add_argument("--stack", nargs="+", default=None, metavar="NAME", help="only these stacks (default: every "
                                                                            "stack with a file on either side)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the diff as JSON")
    form.add_argument("--markdown", action="store_true", help="print it as a pull request comment")
    p.add_argument("--online", action="store_true",
                   help="also hold each changed stack's jobs against the project's Vertex AI quotas, as plan --online "
                        "does (over a limit: exit 1)")
    p.set_defaults(func=diff)
