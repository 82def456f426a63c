"""Rules on a Vertex AI job's worker pools as a whole and on what each pool asks of capacity: the primary
pool, replicas and code, TPU VMs (topology, one pool, one replica), reservations, boot disks, and what the
scheduling strategy (SPOT, FLEX_START) requires of the pools.

Sources: aiplatform.v1.json (CustomJobSpec.workerPoolSpecs: "All worker pools except the first one are
optional and can be skipped by providing an empty value"), and the pages in catalog.vertex_machines and
catalog.vertex_jobspec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, suggestion
from gcp_training_jobs.jobspec.rules.vertex_hardware import Setting
from gcp_training_jobs.jobspec.translate.pools import Pool

_RESERVATION_VALUE = re.compile(catalog.RESERVATION_VALUE_PATTERN)


def rule_pool_structure(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """At least one pool; the first the primary (not empty, one replica); every other pool empty or complete:
    a machine type, at least one replica, and exactly one of containerSpec or pythonPackageSpec."""
    if not pools:
        yield Problem("workerPoolSpecs", "required: at least one worker pool; allowed: a list of pools, the first "
                      "being the primary replica (replicaCount 1)")
        return
    for pool in pools:
        if pool.empty:
            if pool.index == 0:
                yield Problem(pool.where, "the first pool is the primary replica and cannot be empty; allowed: a "
                              "pool with machineSpec, replicaCount 1 and containerSpec or pythonPackageSpec ({} "
                              "placeholders are allowed from the second pool on)")
            continue
        if pool.machine_type is None:
            yield Problem(pool.at("machineType"), "required; allowed: a machine type (e.g. n1-standard-8)")
        if pool.index == 0 and pool.replicas != 1 and not (pool.is_tpu and pool.replicas):  # TPUs: rule_tpus
            shown = "required" if pool.replicas is None else f"{pool.replicas}"
            yield Problem(pool.at("replicaCount"), f"{shown}: the first pool is the primary replica; allowed: 1 "
                          "(add replicas in a second pool)")
        elif pool.index > 0 and (pool.replicas is None or pool.replicas < 1):
            shown = "required" if pool.replicas is None else f"{pool.replicas}"
            yield Problem(pool.at("replicaCount"), f"{shown}; allowed: 1 or more, or an empty pool {{}} to skip "
                          "this one")
        if len(pool.code) != 1:
            wrong = "both are set" if pool.code else "required"
            yield Problem(pool.where, f"{wrong}: each pool runs one of containerSpec (a custom container) or "
                          "pythonPackageSpec (a Python package in a prebuilt container); allowed: exactly one")


def rule_tpus(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """tpuTopology only on TPU VM hosts, one of the shapes documented for the host; a TPU VM pool is the job's
    only pool, with one replica (the topology, not replicaCount, sets how many VMs)."""
    busy = [p for p in pools if not p.empty]
    for pool in busy:
        mt, topology = pool.machine_type or "", pool.tpu_topology
        host = catalog.TPU_HOSTS.get(mt)
        if topology is not None and host is None:
            yield Problem(pool.at("tpuTopology"), f"{topology!r} is set but {mt or 'the machine'} is not a TPU VM "
                          f"host; allowed: unset, or a TPU machine type: {allowed(catalog.TPU_HOSTS)}")
        elif host is not None:
            if topology is None:
                yield Problem(pool.at("tpuTopology"), f"required with {mt}; allowed: {allowed(host.topologies)}")
            elif topology not in host.topologies:
                elsewhere = [t for t, h in catalog.TPU_HOSTS.items() if topology in h.topologies and t != mt]
                hint = f" ({topology} is a topology of {allowed(elsewhere)})" if elsewhere else ""
                yield Problem(pool.at("tpuTopology"), f"{topology!r} is not a topology of {mt}; allowed: "
                              f"{allowed(host.topologies)}{hint}")
        if not pool.is_tpu:
            continue
        if pool.replicas is not None and pool.replicas != catalog.TPU_REPLICA_COUNT:
            slice_ = catalog.TPU_SLICES.get((mt, topology or ""))
            if slice_ and host:
                chips, vms = slice_
                why = (f"the topology sets the VMs: {topology} is {chips} chips on {vms} VM(s) of "
                       f"{host.chips_per_host} chips, with replicaCount 1")
            else:
                why = "a TPU VM pool runs one replica"
            yield Problem(pool.at("replicaCount"), f"{pool.replicas} with {mt}{' ' + topology if topology else ''}; "
                          f"allowed: 1 ({why})")
        if len(busy) > 1:
            others = len(busy) - 1
            yield Problem(pool.where, f"{mt} is a TPU VM: a job using one has this single worker pool (Vertex AI "
                          f"runs the code on the TPU VM itself), but {others} other pool(s) are set; allowed: "
                          "one pool")


def rule_reservations(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """reservationAffinity: a usable type; key and values only (and then required) for a specific
    reservation, naming reservations in the job's region; none with FLEX_START or a persistent resource;
    GB200 only from reservations."""
    for pool in pools:
        if pool.empty:
            continue
        res, at = pool.reservation, pool.at("reservationAffinity")
        kind = res.reservation_affinity_type if res else None
        if pool.implied_accelerator in catalog.GPU_RESERVATION_REQUIRED and kind not in catalog.RESERVATION_CONSUMING:
            where = pool.at("acceleratorType") if pool.accelerator_type else pool.at("machineType")
            yield Problem(where, f"{pool.implied_accelerator} capacity is obtained only from shared reservations "
                          f"({catalog.SOURCE_RESERVATIONS.url}); allowed: machineSpec.reservationAffinity with "
                          f"{allowed(catalog.RESERVATION_CONSUMING)}")
        if res is None:
            continue
        if kind is None:
            yield Problem(f"{at}.reservationAffinityType", f"required; allowed: "
                          f"{allowed(catalog.RESERVATION_AFFINITY_USABLE)}")
            continue
        if kind not in catalog.RESERVATION_AFFINITY_USABLE:
            why = " ('This should not be used')" if kind in catalog.RESERVATION_AFFINITY_TYPES else \
                suggestion(kind, catalog.RESERVATION_AFFINITY_USABLE)
            yield Problem(f"{at}.reservationAffinityType", f"{kind!r}{why}; allowed: "
                          f"{allowed(catalog.RESERVATION_AFFINITY_USABLE)}")
            continue
        if kind == "SPECIFIC_RESERVATION":
            yield from _specific(res.key, res.values, at, s)
        elif res.key is not None or res.values is not None:
            yield Problem(at, f"key and values are set with {kind}; allowed: key and values only with "
                          "SPECIFIC_RESERVATION")
        if kind in catalog.RESERVATION_CONSUMING:
            if s.strategy in catalog.RESERVATION_EXCLUDES_STRATEGIES:
                yield Problem(at, f"{kind} with scheduling.strategy {s.strategy}: reservations cannot be consumed "
                              f"by {s.strategy} jobs ({catalog.SOURCE_RESERVATIONS.url}); allowed: NO_RESERVATION "
                              "or unset, or another strategy")
            if s.persistent_resource and catalog.RESERVATION_EXCLUDES_PERSISTENT_RESOURCE:
                yield Problem(at, f"{kind} with persistentResourceId: jobs on a persistent resource cannot consume "
                              "reservations; allowed: NO_RESERVATION or unset, or no persistentResourceId")


def _specific(key: str | None, values: list[str] | None, at: str, s: Setting) -> Iterator[Problem]:
    if key != catalog.RESERVATION_NAME_KEY:
        shown = "required" if key is None else repr(key)
        yield Problem(f"{at}.key", f"{shown} with SPECIFIC_RESERVATION; allowed: {catalog.RESERVATION_NAME_KEY}")
    if not values:
        yield Problem(f"{at}.values", "required with SPECIFIC_RESERVATION; allowed: the reservation's name, "
                      "projects/PROJECT/zones/ZONE/reservations/NAME")
    for i, value in enumerate(values or []):
        match = _RESERVATION_VALUE.fullmatch(value)
        if match is None:
            yield Problem(f"{at}.values[{i}]", f"{value!r}; allowed: projects/PROJECT/zones/ZONE/reservations/NAME "
                          "(or a block or sub-block of it)")
        elif s.region is not None and match.group("zone").rsplit("-", 1)[0] != s.region:
            yield Problem(f"{at}.values[{i}]", f"zone {match.group('zone')} is not in the job's region {s.region}; "
                          f"allowed: a reservation in a zone of {s.region}")


def rule_disks(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """diskSpec: a documented boot disk type (Hyperdisk on the machines that boot only from it), and a size in the
    documented range."""
    low, high = catalog.BOOT_DISK_SIZE_GB
    for pool in pools:
        if pool.disk_type is not None and pool.disk_type not in catalog.BOOT_DISK_TYPES:
            yield Problem(pool.at("bootDiskType"), f"{pool.disk_type!r}"
                          f"{suggestion(pool.disk_type, catalog.BOOT_DISK_TYPES)}; allowed: "
                          f"{allowed(catalog.BOOT_DISK_TYPES)}")
        elif pool.disk_type is not None and pool.machine_type in catalog.HYPERDISK_ONLY_MACHINES \
                and pool.disk_type not in catalog.HYPERDISK_BOOT_DISK_TYPES:
            yield Problem(pool.at("bootDiskType"), f"{pool.disk_type!r}: {pool.machine_type} boots only from "
                          f"Hyperdisk, not Persistent Disk ({catalog.SOURCE_HYPERDISK_ONLY.url}); allowed: "
                          f"{allowed(catalog.HYPERDISK_BOOT_DISK_TYPES)}")
        if pool.disk_size_gb is not None and not low <= pool.disk_size_gb <= high:
            yield Problem(pool.at("bootDiskSizeGb"), f"{pool.disk_size_gb}; allowed: {low} to {high}")


def rule_strategy_pools(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """What SPOT and FLEX_START ask of the pools: no TPU Pods on Spot; on Flex Start, one of the documented
    GPUs and the same machine in every pool."""
    busy = [p for p in pools if not p.empty and p.machine_type]
    if s.strategy == "SPOT" and catalog.SPOT_EXCLUDES_TPU_PODS:
        for pool in busy:
            if pool.tpu_pod:
                yield Problem(pool.at("acceleratorCount"), f"{pool.accelerator_count} cores is a TPU Pod, and Spot "
                              f"VMs cannot run TPU Pods ({catalog.SOURCE_SPOT.url}); allowed with SPOT: 8, or "
                              "strategy STANDARD")
    if s.strategy != "FLEX_START":
        return
    for pool in busy:
        if pool.implied_accelerator not in catalog.FLEX_START_GPUS:
            what = pool.implied_accelerator or "no GPU"
            yield Problem(pool.at("acceleratorType") if pool.accelerator_type else pool.at("machineType"),
                          f"{pool.machine} has {what}, and FLEX_START schedules jobs that request GPUs of "
                          f"{allowed(catalog.FLEX_START_GPUS)} ({catalog.SOURCE_DWS.url}); allowed: one of those, "
                          "or strategy STANDARD or SPOT")
    shapes = {(p.machine_type, p.implied_accelerator, p.accelerator_count) for p in busy}
    if len(shapes) > 1:
        yield Problem(busy[-1].at("machineType"), f"FLEX_START jobs use the same machine configuration in every "
                      f"pool, but the pools differ ({'; '.join(p.machine for p in busy)}); allowed: one machine "
                      "configuration for all pools, or strategy STANDARD or SPOT")

