"""Which training jobs a stack's state holds, as the engine keeps it: `pulumi stack export --stack NAME`, run in
the project's folder when a `pulumi` CLI is on PATH, in bounded time, for `status`.

The state is the engine's, not this library's: it is read only through the Pulumi CLI, the one reader that knows
every backend (file://, gs://, s3://, Pulumi Cloud) and its locks. Of the export, only the TrainingJob resources'
URNs (their resource names) and their `jobId` outputs are read: the export holds secrets encrypted, and no value of
it is ever printed. A state that cannot be read (no CLI, no such stack, the backend not reachable, no answer in
STATE_SECONDS) is said in one line, and nothing is marked by it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from gcp_training_jobs.jobspec.core.names import JOB_TYPES
from gcp_training_jobs.resources.job_model.declared import JOB_ID

#: How long `pulumi stack export` may take (a remote backend's answer included), in seconds.
STATE_SECONDS: Final = 60

#: Runs a command (argv, its folder, its time bound) and answers it as subprocess.run does (stdout, stderr: text).
Runner = Callable[[list[str], Path, float], "subprocess.CompletedProcess[str]"]


@dataclass(frozen=True)
class StackState:
    """The stack's TrainingJobs in its state: resource name -> the job id its state holds (None: not plain text,
    e.g. a secret), or why the state was not read (`unread`; then `jobs` is empty and marks nothing)."""

    jobs: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    unread: str | None = None

    @property
    def read(self) -> bool:
        return self.unread is None

    def holds(self, name: str | None, job_id: str) -> bool:
        """Whether the state holds this job: its id is a resource's job id, or its resource is there with an id
        that cannot be read."""
        return job_id in self.jobs.values() or (name is not None and name in self.jobs and self.jobs[name] is None)


def _run(argv: list[str], folder: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def read_state(stack: str, folder: Path, run: Runner = _run, timeout: float = STATE_SECONDS) -> StackState:
    """The TrainingJobs of stack `stack`'s state, exported by the Pulumi CLI in the project folder `folder`."""
    exe = shutil.which("pulumi")
    if exe is None:
        return StackState(unread="no pulumi CLI on PATH")
    try:
        done = run([exe, "stack", "export", "--stack", stack, "--non-interactive"], folder, timeout)
    except subprocess.TimeoutExpired:
        return StackState(unread=f"`pulumi stack export --stack {stack}` gave no answer in {timeout:g} s")
    except OSError as error:
        return StackState(unread=f"`pulumi stack export` could not run: {error.strerror or error}")
    if done.returncode != 0:
        said = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
        why = said[-1][:200] if said else "no message"
        return StackState(unread=f"`pulumi stack export --stack {stack}` failed (exit {done.returncode}): {why}")
    try:
        return StackState(jobs=MappingProxyType(jobs_of_export(json.loads(done.stdout))))
    except (ValueError, TypeError, AttributeError):
        return StackState(unread=f"`pulumi stack export --stack {stack}` printed no deployment this command reads")


def jobs_of_export(document: Mapping[str, Any]) -> dict[str, str | None]:
    """Resource name -> job id of every TrainingJob in an export (its `jobId` output when it is plain text)."""
    resources = (document.get("deployment") or {}).get("resources") or []
    found: dict[str, str | None] = {}
    for resource in resources:
        if resource.get("type") not in JOB_TYPES or resource.get("delete"):
            continue  # (`delete`: a replaced resource the engine has still to delete)
        name = str(resource.get("urn", "")).rsplit("::", 1)[-1]
        job_id = (resource.get("outputs") or {}).get(JOB_ID)
        if name:
            found[name] = job_id if isinstance(job_id, str) else None
    return found
