"""The quota check of a TrainingJob's `check` (at `pulumi preview` and before `up` creates it): will Google run it?

For a job the preview creates or replaces, on Vertex AI: what it needs (gcp_training_jobs.jobspec.review.quotas, from
the
body judged once) with the stack's other jobs (the stack's quota needs input: what the stack's jobs need together per
region and metric, computed by stack.py from the settings; it stands for what the stack's live jobs, found by their
`pulumi-stack` label, hold now), plus what the project's other live jobs hold in that region, against the limits
(Cloud Quotas, else Service Usage). Over a limit at every placement (the job as written,
then each of `fallbacks`): the check fails, naming the metric, the region, the need, the usage, the limit and how to
ask for more. Over at the first placement only: a warning says which fallback `up` will use. Quotas that cannot be
read (no credentials, permission denied): a warning, never a failure.

What the checks of one run read alike is read once per run (gcp_training_jobs.backends.run_cache.RUN): a project's
limits,
and what a region's live jobs hold where the review puts the stack's needs in place of its live jobs. That read stays
right while the run creates the stack's jobs: they carry its `pulumi-stack` label, so a later read would add them to
the region's usage and to the stack's alike, and the review takes the stack's part out again. Where no stack stands
in (a job without the stack's needs, or a fallback region none of the stack's jobs is written for), the jobs are read
anew.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gcp_training_jobs.backends import quotas
from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.review.quotas import Needs, needs_of
from gcp_training_jobs.jobspec.translate.facts import JobFacts


def stack_quota(jobs: Iterable[JobFacts]) -> dict[str, Any] | None:
    """The stack's quota needs input of every job of a stack (stack.py): what the stack's jobs need together, per region
    and metric, from their judged facts. The same small value for every job
    (its size grows with the regions and metrics, not with the jobs); None when no job needs anything that has a
    metric."""
    needs: dict[str, dict[str, int]] = {}
    for facts in jobs:
        if not facts.region:
            continue
        for metric, units in needs_of(facts).units.items():
            here = needs.setdefault(facts.region, {})
            here[metric] = here.get(metric, 0) + units
    return {"needs": needs} if needs else None


@dataclass
class Outcome:
    """What the check reports: failures (the check fails), warnings and notes (logged)."""

    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    debug: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check(project: str, name: str, resource: str,
          tries: Mapping[int, JobFacts], stack: str, stack_needs: Mapping[str, Mapping[str, int]],
          endpoint: str | None) -> Outcome:
    """Review each placement (its index: the facts of the job there, as judged, load.Judged.facts) in order; the
    first that fits ends the review.

    `stack` (the job's STACK_LABEL value) and `stack_needs` (the stack's quota needs input) stand for the stack's jobs:
    in a region they need what the stack's jobs need there together (the job itself included, where it is written), in
    place of what the stack's live jobs hold now. Without them, the job alone is added to what live jobs hold."""
    out = Outcome()
    first: list[str] = []
    failures: list[str] = []
    limits: quotas.Limits | None = None
    for index, facts in tries.items():
        region = facts.region or ""
        own = quotas.Candidate(name, region, needs_of(facts), resource)
        together = stack_needs.get(region) if stack else None
        if together and index == 0:  # the job is one of the stack's jobs as written: counted with them
            candidates = [quotas.Candidate(f"stack jobs incl. {name}", region, Needs(dict(together)), stack=stack)]
        elif together:  # a fallback: the job moves here, beside the stack's jobs written for this region
            candidates = [own, quotas.Candidate("other stack jobs", region, Needs(dict(together)), stack=stack)]
        else:
            candidates = [own]
        try:
            if limits is None and any(c.needs for c in candidates):
                limits, warned = RUN.once(("limits", project, endpoint), partial(_limits, project, endpoint))
                out.warnings += warned
            found = quotas.review(project, candidates, endpoint=endpoint, limits=limits or {},
                                  held_in=partial(_held, project, endpoint) if together else None)
        except quotas.QuotaUnreadable as error:
            (out.skipped if error.offline else out.warnings).append(f"job {name}: quota check skipped: {error}")
            return out
        if index == 0:
            out.notes += [n for n in found.notes if "no limit found" not in n]
            out.debug += [n for n in found.notes if "no limit found" in n]
        if found.ok:
            if index:
                out.warnings.append(f"job {name}: over quota as written ({'; '.join(first)}); `pulumi up` will "
                                    f"create it at fallbacks[{index - 1}] ({region}), which fits")
            return out
        if index == 0:
            first = [e.short() for e in found.excesses]
        where = f"fallbacks[{index - 1}]: " if index else ""
        failures += [f"job {name}: {where}{e.message(project)}" for e in found.excesses]
    out.failures = failures
    return out


def _limits(project: str, endpoint: str | None) -> tuple[quotas.Limits, tuple[str, ...]]:
    """The project's limits and the warnings of their read (each job's check repeats them)."""
    warned: list[str] = []
    return quotas.read_limits(project, endpoint, warn=warned.append), tuple(warned)


def _held(project: str, endpoint: str | None, region: str) -> quotas.Held:
    """What the region's live jobs hold, read once per run: only where the stack's own jobs are taken out (above)."""
    return RUN.once(("held", project, region, endpoint), partial(quotas.held, project, region, endpoint))
