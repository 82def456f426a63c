"""What a job counts against Vertex AI's custom training quotas, read from its facts (load.Judged.facts, or
translate.facts.facts_of_body for a job as the API holds it: its pools, strategy and parallel runs). Pure; how a
stack's jobs are held against the limits is review.quota_fit's one rule.

A pool needs, per replica, its accelerators (against the accelerator's metric) and, on N1 and E2 machines, its
vCPUs (against custom_model_training_cpus); a job on SPOT or FLEX_START counts against the preemptible twins; a
tuning job times its parallel trials; a pool on a named reservation (SPECIFIC_RESERVATION) counts none. What no
source names a metric for is listed in `unchecked`, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
        if pool.reservation is not None and pool.reservation.reservation_affinity_type == table.RESERVED_ONLY_AFFINITY:
            continue  # on a named reservation's machines only: no on-demand quota (catalog.quotas)
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
