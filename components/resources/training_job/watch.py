"""What the TrainingJob provider tells about a job after its create: a waiting `pulumi up`'s reports (its log's
last line every REPORT_SECONDS, and a FAILED job's error with its last LAST_LINES log lines) and the job's cost so
far (the `costUsd` output). No Pulumi here: the provider logs what these return.

The log is read from Cloud Logging (components.backends.cloud_logging) at the provider's endpoint override, else
Google's; a read that fails is said once (a deployer without `roles/logging.viewer` still deploys) and never fails
the job's create. The clock is the provider's (injected in tests), so "every minute" is counted, never timed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from components.backends.cloud_logging import LoggingError, LogLine, Reader, log_job_id
from components.jobspec.catalog.prices import PriceTableError
from components.jobspec.core.names import ACTIVE_STATES
from components.jobspec.review.run_cost import run_cost
from components.jobspec.translate.pools import Pool

#: How many of a FAILED job's last log lines its error carries.
LAST_LINES: Final = 20
#: How often (by the provider's clock) a waiting `pulumi up` reports its job's last log line.
REPORT_SECONDS: Final = 60.0
#: The longest log line a report shows (a line is a trainer's print: it may be anything).
MAX_LINE: Final = 300

Log = Callable[[str], None]


def cost_usd(job: Mapping[str, Any], region: str | None, now: float,
             pools: Sequence[Pool] | None = None) -> float | None:
    """The job's cost so far in USD, rounded to the cent (run_cost: run time x the rate it runs at), from the job
    as the API answered it (`pools`: its pools, when the caller read them already); None when a part has no known
    price or the price table cannot be read."""
    try:
        found = run_cost(job, "job", region, datetime.fromtimestamp(now, tz=UTC), pools=pools)
    except PriceTableError:
        return None
    return None if found.usd is None else round(found.usd, 2)


def _short(line: LogLine) -> str:
    text = line.text()
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 1] + "…"


class WaitReport:
    """The reports of one waited job: `poll` at each of the wait's polls, `failure` when it ended FAILED."""

    def __init__(self, reader: Reader, job_name: str, state_of: Callable[[dict[str, Any]], str],
                 clock: Callable[[], float], info: Log, warn: Log):
        self.reader, self.job_name, self.state_of, self.clock = reader, job_name, state_of, clock
        self.info, self.warn = info, warn
        self._last = clock()
        self._unreadable = False

    def poll(self, job: dict[str, Any]) -> None:
        """Every REPORT_SECONDS while the job is active: its last log line (nothing when it has none yet)."""
        if self.clock() - self._last < REPORT_SECONDS:
            return
        self._last = self.clock()
        if self.state_of(job) not in ACTIVE_STATES:
            return
        lines = self._tail(job, 1)
        if lines:
            self.info(f"training job {self.job_name}: last log line: {_short(lines[-1])}")

    def failure(self, job: dict[str, Any], message: str) -> str:
        """The error of a waited job that ended FAILED: its error message, then its last LAST_LINES log lines."""
        head = f"training job {self.job_name} FAILED: {message}"
        lines = self._tail(job, LAST_LINES)
        if self._unreadable:
            return head + " (its log could not be read; see the warning above)"
        if not lines:
            return head + " (its log has no line)"
        shown = "\n".join(f"    {_short(line)}" for line in lines)
        return f"{head}\nits last {len(lines)} log lines:\n{shown}"

    def _tail(self, job: dict[str, Any], count: int) -> list[LogLine]:
        if self._unreadable:
            return []
        try:
            return self.reader.tail(log_job_id(job), count)
        except LoggingError as error:
            self._unreadable = True
            self.warn(f"training job {self.job_name}: cannot read its log: {error}")
            return []
