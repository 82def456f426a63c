"""Rules on Vertex AI hardware, on the normalised pools of either vocabulary: machine types, the accelerators
each takes (fixed by the type, or attached to N1), GPUs past their end of support, and what the region offers.

Judged against catalog.vertex_machines and catalog.vertex_regions (the configure-compute and locations pages).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.replacements import replacement
from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, allowed_some, suggestion
from gcp_training_jobs.jobspec.rules.regions import region_problem
from gcp_training_jobs.jobspec.rules.tasks import in_support, support_ended
from gcp_training_jobs.jobspec.translate.pools import Pool


@dataclass(frozen=True)
class Setting:
    """What the pool rules need besides the pools: where the job runs, how it is scheduled, and today."""

    region: str | None
    region_at: str  # where the region was given: "trainingInput.region", "--region", a stack key
    today: date
    strategy: str | None = None
    persistent_resource: bool = False


def _family(machine_type: str) -> str:
    """a3-highgpu-8g -> a3-highgpu; cloud-tpu -> cloud-tpu."""
    return machine_type if machine_type == catalog.CLOUD_TPU_MACHINE else machine_type.rsplit("-", 1)[0]


def _series(machine_type: str) -> str:
    """a3-highgpu-8g -> a3; cloud-tpu -> cloud-tpu."""
    return machine_type if machine_type == catalog.CLOUD_TPU_MACHINE else machine_type.split("-", 1)[0]


def machine_choices(machine_type: str) -> str:
    """The machine types relevant to a wrong one: its family's, else its series' families, else the series."""
    types = catalog.VERTEX_MACHINE_TYPES
    same_family = [t for t in types if _family(t) == _family(machine_type)]
    if same_family:
        return allowed(same_family)
    series = _series(machine_type)
    families = list(dict.fromkeys(_family(t) for t in types if _series(t) == series))
    if families:
        return f"a type of the {', '.join(families)} families (e.g. {next(t for t in types if _series(t) == series)})"
    return (f"a type of the series {', '.join(sorted(dict.fromkeys(_series(t) for t in types)))} "
            "(e.g. n1-standard-8, g2-standard-8, a3-highgpu-8g)")


def accelerators_of(machine_type: str) -> tuple[str, ...]:
    """The accelerator types a machine type takes on Vertex AI (none for CPU-only types)."""
    fixed = catalog.FIXED_ACCELERATOR_MACHINES.get(machine_type)
    if fixed:
        return (fixed.accelerator,)
    if machine_type in catalog.N1_GPU_COUNTS:
        return tuple(catalog.N1_GPU_COUNTS[machine_type])
    if machine_type == catalog.CLOUD_TPU_MACHINE:
        return tuple(catalog.CLOUD_TPU_ACCELERATOR_COUNTS)
    host = catalog.TPU_HOSTS.get(machine_type)
    return (host.accelerator,) if host and host.accelerator else ()


def homes(accelerator: str) -> str:
    """Where an accelerator is offered: " (NVIDIA_L4 comes with g2-standard-4, ...)", or ""."""
    fixed = [t for t, m in catalog.FIXED_ACCELERATOR_MACHINES.items() if m.accelerator == accelerator]
    if fixed:
        return f" ({accelerator} comes with {allowed(fixed)})"
    if any(accelerator in row for row in catalog.N1_GPU_COUNTS.values()):
        return f" ({accelerator} attaches to n1 types, e.g. n1-standard-8)"
    if accelerator in catalog.CLOUD_TPU_ACCELERATOR_COUNTS:
        return f" ({accelerator} runs on machine type {catalog.CLOUD_TPU_MACHINE})"
    hosts = [t for t, h in catalog.TPU_HOSTS.items() if h.accelerator == accelerator]
    return f" ({accelerator} runs on {allowed(hosts)})" if hosts else ""


def rule_machines(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """Known machine types; each accelerator only on the machines that take it, in the counts they take it;
    no GPU past its end of support."""
    for pool in pools:
        if pool.empty or pool.machine_type is None:
            continue
        mt = pool.machine_type
        if mt not in catalog.VERTEX_MACHINE_TYPES:
            yield Problem(pool.at("machineType"), f"{mt!r} is not a machine type of Vertex AI training"
                          f"{suggestion(mt, catalog.VERTEX_MACHINE_TYPES)}; allowed: {machine_choices(mt)}")
            continue
        yield from _accelerators(pool, mt, s.today)


def _generation(name: str) -> str:
    """A TPU generation as written, reduced for comparison: TPU_V6E, tpu-v6e and v6e are `6e`; TPU7X is `7x`."""
    return "".join(c for c in name.lower() if c.isalnum()).removeprefix("tpu").removeprefix("v")


def _tpu_by_machine(accelerator: str) -> tuple[str, ...] | None:
    """The machine types of the TPU generation `accelerator` names, when the enum has no value for it (v6e, 7x)."""
    wanted = _generation(accelerator)
    return next((machines for generation, machines in catalog.TPU_NAMED_BY_MACHINE.items()
                 if _generation(generation) == wanted), None)


def _accelerators(pool: Pool, mt: str, today: date) -> Iterator[Problem]:
    acc, count = pool.accelerator_type, pool.accelerator_count
    acc_at, count_at = pool.at("acceleratorType"), pool.at("acceleratorCount")
    implied = pool.implied_accelerator
    ended = support_ended(implied, today)
    if ended is not None and implied is not None:
        source = catalog.GPU_END_OF_SUPPORT_SOURCES.get(implied)
        current = [a for a in in_support(accelerators_of(mt), today) if a != implied]
        where = f" ({source.url})" if source else ""
        found = replacement(mt, implied, count or 1) if mt in catalog.N1_GPU_COUNTS else None
        instead = ""
        if found is not None and pool.role is not None:  # trainingInput: the scale tier's words
            instead = f"; instead: {found}"
        elif found is not None:
            instead = f"; instead: {found.machine_type} with {found.accelerator_count} {found.accelerator_type}"
            if found.alternative:
                instead += f" (or {found.alternative}, {found.accelerator_count} NVIDIA_L4 built in)"
        yield Problem(acc_at, f"{implied} is not offered by Vertex AI since its end of support on "
                      f"{ended.isoformat()}{where}; allowed on {mt}: {allowed(current)}{instead}")
        return
    if acc is not None and acc not in catalog.VERTEX_ACCELERATOR_TYPES:
        why = catalog.NOT_OFFERED_ACCELERATORS.get(acc)
        if why:
            yield Problem(acc_at, f"{acc} is not offered for custom training: {why}; allowed on {mt}: "
                          f"{allowed(in_support(accelerators_of(mt), today))}")
        elif (machines := _tpu_by_machine(acc)) is not None:
            shapes = allowed(dict.fromkeys(t for m in machines for t in catalog.TPU_HOSTS[m].topologies))
            yield Problem(acc_at, f"{acc!r} is not an accelerator type: a TPU of that generation has no "
                          "acceleratorType value, it is asked for by its machine type; allowed: machineType "
                          f"{allowed(machines)} with a tpuTopology ({shapes}), and no acceleratorType or "
                          f"acceleratorCount ({catalog.vertex_machines.TPU_SOURCE.url})")
        else:
            yield Problem(acc_at, f"{acc!r} is not an accelerator type"
                          f"{suggestion(acc, catalog.VERTEX_ACCELERATOR_TYPES)}; allowed on {mt}: "
                          f"{allowed(in_support(accelerators_of(mt), today))}")
        return
    if pool.gpu_partition_size is not None and count != 1:
        yield Problem(pool.at("gpuPartitionSize"), f"is set with acceleratorCount {count}; allowed: "
                      "acceleratorCount 1 (aiplatform.v1.json: 'If set, the accelerator_count should be set to 1')")
    fixed = catalog.FIXED_ACCELERATOR_MACHINES.get(mt)
    if fixed is not None or mt in catalog.TPU_HOSTS:
        unpaired = _unpaired(acc, count, acc_at, count_at, fixed)
        if unpaired is not None:
            yield unpaired
            return
    if fixed is not None:
        yield from _fixed(mt, fixed, acc, count, acc_at, count_at)
    elif mt in catalog.N1_GPU_COUNTS:
        yield from _n1(mt, acc, count, acc_at, count_at, today)
    elif mt == catalog.CLOUD_TPU_MACHINE:
        yield from _cloud_tpu(acc, count, acc_at, count_at)
    elif mt in catalog.TPU_HOSTS:
        host = catalog.TPU_HOSTS[mt]
        if acc is not None and acc != host.accelerator:
            takes = f"{host.accelerator} or unset" if host.accelerator else "unset (the enum has no value for it)"
            yield Problem(acc_at, f"{acc} on {mt}; allowed: {takes}{homes(acc)}")
    elif acc is not None or count is not None:
        what = acc if acc is not None else f"acceleratorCount {count}"
        yield Problem(acc_at if acc is not None else count_at, f"{what} on {mt}: {mt} takes no accelerators; "
                      f"allowed: unset, or a GPU machine type{homes(acc) if acc else ' (n1, g2, a2, a3, ...)'}")


def _unpaired(acc: str | None, count: int | None, acc_at: str, count_at: str,
              fixed: catalog.FixedMachine | None) -> Problem | None:
    """acceleratorType without acceleratorCount, or the other way round: Vertex AI takes both or neither
    (catalog.ACCELERATOR_PAIR_RULE), even where the machine type fixes them. (N1 and cloud-tpu judge the pair in
    their own rules, with the counts they take.)"""
    if (acc is None) == (count is None):
        return None
    vertex = f"Vertex AI refuses one without the other ('{catalog.ACCELERATOR_PAIR_RULE}')"
    if acc is not None:
        counts = f"acceleratorCount {fixed.count}" if fixed is not None else "an acceleratorCount too"
        return Problem(count_at, f"required with acceleratorType {acc}: {vertex}; allowed: {counts}, or neither field")
    kind = f"acceleratorType {fixed.accelerator}" if fixed is not None else "an acceleratorType too"
    return Problem(acc_at, f"required with acceleratorCount {count}: {vertex}; allowed: {kind}, or neither field")


def _fixed(mt: str, fixed: catalog.FixedMachine, acc: str | None, count: int | None, acc_at: str,
           count_at: str) -> Iterator[Problem]:
    if acc is not None and acc != fixed.accelerator:
        yield Problem(acc_at, f"{acc} on {mt}: the {fixed.family} family comes with {fixed.accelerator} only; "
                      f"allowed: {fixed.accelerator} (or unset){homes(acc)}")
        return
    if count is not None and count != fixed.count:
        other = next((t for t, m in catalog.FIXED_ACCELERATOR_MACHINES.items()
                      if m.family == fixed.family and m.count == count), None)
        hint = f"; {other} comes with {count}" if other else ""
        yield Problem(count_at, f"{count} {fixed.accelerator} on {mt}, which comes with exactly {fixed.count}; "
                      f"allowed: {fixed.count}{hint}")


def _n1(mt: str, acc: str | None, count: int | None, acc_at: str, count_at: str,
        today: date) -> Iterator[Problem]:
    # what may be attached today (a GPU past its end of support is refused above, and never offered)
    offered = {gpu: catalog.N1_GPU_COUNTS[mt][gpu] for gpu in in_support(catalog.N1_GPU_COUNTS[mt], today)}
    if acc is None:
        if count is not None:
            yield Problem(count_at, f"{count} without acceleratorType; allowed: an acceleratorType too "
                          f"({allowed(offered)} on {mt}), or neither")
        return
    if acc not in offered:
        yield Problem(acc_at, f"{acc} on {mt} is not offered; allowed on {mt}: {allowed(offered)}{homes(acc)}")
        return
    counts = offered[acc]
    if count is None:
        yield Problem(count_at, f"required with acceleratorType {acc}; allowed on {mt}: {allowed(counts)}")
    elif count not in counts:
        yield Problem(count_at, f"{count} {acc} on {mt}; allowed: {allowed(counts)}")


def _cloud_tpu(acc: str | None, count: int | None, acc_at: str, count_at: str) -> Iterator[Problem]:
    kinds = catalog.CLOUD_TPU_ACCELERATOR_COUNTS
    if acc is None or acc not in kinds:
        shown = "missing" if acc is None else acc
        yield Problem(acc_at, f"{shown} on {catalog.CLOUD_TPU_MACHINE}; allowed: {allowed(kinds)}"
                      f"{homes(acc) if acc else ''}")
        return
    rule = catalog.CLOUD_TPU_POD_COUNT_RULE[acc]
    pods = count is not None and count >= 32 and (count % 32 == 0 or "multiple" not in rule)
    if count != catalog.CLOUD_TPU_SINGLE_COUNT and not pods:
        shown = "missing" if count is None else str(count)
        yield Problem(count_at, f"{shown} {acc} cores on {catalog.CLOUD_TPU_MACHINE}; allowed: "
                      f"{catalog.CLOUD_TPU_SINGLE_COUNT} (one TPU) or {rule} (a TPU Pod)")


# --- Regions -----------------------------------------------------------------------------------------------


def _regions_offering(accelerator: str) -> list[str]:
    return sorted(r for r, offered in catalog.REGION_ACCELERATORS.items() if accelerator in offered)


def _regions_with_label(label: str) -> list[str]:
    return sorted(r for r, labels in catalog.UNMAPPED_ACCELERATORS.items() if label in labels)


def _pod_problem(pool: Pool, accelerator: str, region: str, offered: frozenset[str]) -> Problem | None:
    """A TPU Pod (Pool.tpu_pod) where the region runs none of that TPU type (catalog.REGION_TPU_PODS: fewer regions
    than the single device's), naming the region's single device where it has one and the regions with the Pod."""
    if accelerator in catalog.REGION_TPU_PODS.get(region, ()):
        return None
    label = next((lab for lab, kind in catalog.POD_LABELS.items() if kind == accelerator), f"{accelerator} Pod")
    homes = sorted(r for r, kinds in catalog.REGION_TPU_PODS.items() if accelerator in kinds)
    single = f"{catalog.CLOUD_TPU_SINGLE_COUNT} cores (one {label.removesuffix(' Pod')}) in {region}, or " \
        if accelerator in offered else ""
    return Problem(pool.at("acceleratorCount"), f"{pool.accelerator_count} {accelerator} cores is a {label}, which "
                   f"Vertex AI does not offer for training in {region}; allowed: {single}a {label} in "
                   f"{allowed(homes) if homes else 'no region'}")


def rule_region(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """A region where Vertex AI custom training runs, and every pool's accelerator offered there for training."""
    region = s.region
    if region is None:
        return
    if (refused := region_problem(region, s.region_at, VERTEX)) is not None:  # the one region rule
        yield refused
        return
    offered = catalog.REGION_ACCELERATORS[region]
    current = in_support(offered, s.today)  # what the region offers today: never a GPU past its end of support
    for pool in pools:
        if pool.empty or pool.machine_type not in catalog.VERTEX_MACHINE_TYPES:
            continue
        acc = pool.implied_accelerator
        at = pool.at("acceleratorType") if pool.accelerator_type else pool.at("machineType")
        if acc is None:
            label = next((lab for prefix, lab in catalog.UNMAPPED_MACHINE_LABELS.items()
                          if (pool.machine_type or "").startswith(prefix)), None)
            if label and label not in catalog.UNMAPPED_ACCELERATORS.get(region, ()):
                yield Problem(at, f"{label} ({pool.machine_type}) is not offered for training in {region}; "
                              f"allowed: a region offering {label}: {allowed(_regions_with_label(label))}")
            continue
        if pool.tpu_pod and acc in catalog.CLOUD_TPU_ACCELERATOR_COUNTS:  # its Pods run in fewer regions
            if (refused := _pod_problem(pool, acc, region, offered)) is not None:
                yield refused
            continue
        if acc in offered or acc not in catalog.VERTEX_ACCELERATOR_TYPES or support_ended(acc, s.today):
            continue
        listed = " (the locations page lists it there, but not for training)" \
            if acc in catalog.NOT_FOR_TRAINING.get(region, ()) else ""
        yield Problem(at, f"{acc} is not offered for training in {region}{listed}; allowed in {region}: "
                      f"{allowed(sorted(current)) if current else 'no accelerators'}; regions offering {acc}: "
                      f"{allowed_some(_regions_offering(acc), 10)}")
