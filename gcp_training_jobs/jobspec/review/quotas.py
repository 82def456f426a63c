"""What a job counts against Vertex AI's custom training quotas, read from its facts (load.Judged.facts, or
translate.facts.facts_of_body for a job as the API holds it: its pools, strategy and parallel runs), and how a
stack's needs compare with the limits and with what live jobs already hold. Pure: the limits and the live
jobs are read by gcp_training_jobs.backends.quotas.

A pool needs, per replica, its accelerators (against the accelerator's metric) and, on N1 and E2 machines, its
vCPUs (against custom_model_training_cpus); a job on SPOT or FLEX_START counts against the preemptible twins; a
tuning job times its parallel trials. What no source names a metric for is listed in `unchecked`, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gcp_training_jobs.jobspec.catalog import quotas as table
from gcp_training_jobs.jobspec.translate.facts import JobFacts


@dataclass(frozen=True)
class Needs:
    """What one job holds at once: metric (short name) -> units, and what could not be counted."""

    units: Mapping[str, int]
    unchecked: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.units)


def needs_of(facts: JobFacts) -> Needs:
    """The quota a Vertex AI job (CustomJob, HyperparameterTuningJob: its parallel trials) counts against: its
    pools, its strategy and its parallel runs."""
    preemptible = facts.strategy in table.PREEMPTIBLE_STRATEGIES
    units: dict[str, int] = {}
    unchecked: list[str] = []

    def add(metric: str, count: int) -> None:
        metric = table.preemptible(metric) if preemptible else metric
        units[metric] = units.get(metric, 0) + count

    if facts.unread is not None:  # a live job as the API holds it that its vocabulary's model does not read
        unchecked.append(f"the job's pools (they do not read: {facts.unread})")
    for pool in facts.own:  # a job on a persistent resource counts none: the resource holds its machines
        if pool.accelerators:
            kind = pool.held.kind
            metric = table.ACCELERATOR_METRICS.get(str(kind))
            if metric is None:
                unchecked.append(f"{kind} (no quota metric known for it)")
            else:
                add(metric, pool.accelerators)
        machine = str(pool.machine_type or "")
        cpu = table.CPU_MACHINE.fullmatch(machine)
        if cpu is not None:
            add(table.CPU_METRIC, int(cpu.group("vcpus")) * pool.machines)
        elif machine and machine.split("-", 1)[0] not in table.CPU_METRIC_FAMILIES | {"cloud"}:
            unchecked.append(f"the vCPUs of {machine} (no quota metric known for its family)")
        elif machine.split("-", 1)[0] in table.CPU_METRIC_FAMILIES:
            unchecked.append(f"the vCPUs of {machine} (a shared-core or custom type: its vCPUs are unknown)")
    runs = facts.parallel_runs
    return Needs({m: n * runs for m, n in sorted(units.items())}, tuple(dict.fromkeys(unchecked)))


def total(needs: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of several jobs' needs, per metric."""
    out: dict[str, int] = {}
    for one in needs:
        for metric, count in one.items():
            out[metric] = out.get(metric, 0) + count
    return out


@dataclass(frozen=True)
class Excess:
    """A metric over its limit in one region: what the new jobs need, what live jobs hold, the limit."""

    region: str
    metric: str
    need: int
    usage: int
    limit: int
    jobs: tuple[str, ...] = field(default=())

    def short(self) -> str:
        return (f"{self.metric} in {self.region}: need {self.need}, live jobs hold {self.usage}, limit "
                f"{self.limit}")

    def message(self, project: str) -> str:
        who = f" ({', '.join(self.jobs)})" if self.jobs else ""
        console = table.QUOTAS_CONSOLE.format(project=project)
        return (f"quota {table.full_name(self.metric)} in {self.region}: the new jobs{who} need {self.need}, live "
                f"jobs hold {self.usage}, the limit is {self.limit} ({self.need + self.usage} > {self.limit}); ask for "
                f"more at {console} (filter {self.metric}, region {self.region}; {table.REQUEST_MORE}), or give the "
                "job a fallback elsewhere (jobs.NAME.fallbacks)")


def excesses(region: str, need: Mapping[str, int], usage: Mapping[str, int], limits: Mapping[str, int | None],
             jobs: Mapping[str, Iterable[str]] | None = None) -> list[Excess]:
    """Each metric whose need plus usage passes its limit in `region` (a metric without a known limit is not
    judged). `jobs`: metric -> the jobs that need it, for the message."""
    found = []
    for metric, count in sorted(need.items()):
        limit = limits.get(metric)
        if count and limit is not None and count + usage.get(metric, 0) > limit:
            found.append(Excess(region, metric, count, usage.get(metric, 0), limit,
                                tuple((jobs or {}).get(metric, ()))))
    return found
