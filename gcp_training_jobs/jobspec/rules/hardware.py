"""Rules on accelerators: GPU types and counts per machine type, GPU zones of the region, TPU jobs.

Sources: the AI Platform Training GPU guide (GPUs) and TPU guide (TPUs), as the catalog holds them
(catalog.ai_platform_pages).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.problems import Problem, allowed
from gcp_training_jobs.jobspec.rules.tasks import TI, Options, gpus_used, scale_tier, tasks, uses_tpu
from gcp_training_jobs.jobspec.vocab.training_input import AcceleratorConfig, Job


def rule_accelerators(job: Job, opts: Options) -> Iterator[Problem]:
    """GPU type and count valid for the machine type (the GPU guide's table); none on legacy types."""
    ti = job.training_input
    if scale_tier(ti) != "CUSTOM":
        return
    for task in tasks(ti):
        acc = task.accelerator
        if acc is None or task.is_tpu:
            continue
        path = f"{task.config_path}.acceleratorConfig"
        mt = task.machine_type
        if task.is_legacy:
            builtin = catalog.LEGACY_GPUS[mt or ""]
            what = f"{builtin[1]} {builtin[0]} built in" if builtin else "no GPUs"
            yield Problem(path, f"is set on legacy machine type {mt} ({what}); allowed only on Compute "
                          "Engine machine types (e.g. n1-standard-8) and the cloud_tpu worker")
            continue
        if not task.is_compute_engine:
            continue
        yield from _accelerator_problems(path, mt or "", acc)


def _accelerator_problems(path: str, mt: str, acc: AcceleratorConfig) -> Iterator[Problem]:
    if acc.type is None:
        yield Problem(f"{path}.type", f"required with acceleratorConfig; allowed on {mt}: "
                      f"{allowed(catalog.GPU_COUNTS.get(mt, {}))}")
        return
    if acc.type not in catalog.ACCELERATOR_TYPES:
        yield Problem(f"{path}.type", f"{acc.type!r} is not an accelerator type; allowed: "
                      f"{allowed(catalog.GPU_TYPES)}")
        return
    if acc.type in catalog.TPU_TYPES:
        yield Problem(f"{path}.type", f"{acc.type} attaches only to a cloud_tpu worker, not to {mt}; "
                      f"allowed on {mt}: {allowed(catalog.GPU_COUNTS.get(mt, {})) }")
        return
    offered = catalog.GPU_COUNTS.get(mt, {})
    if acc.type not in offered:
        yield Problem(f"{path}.type", f"{acc.type} on {mt} is not offered; allowed on {mt}: "
                      f"{allowed(offered)}")
        return
    counts = offered[acc.type]
    if acc.count is None:
        yield Problem(f"{path}.count", f"required with type {acc.type}; allowed on {mt}: {allowed(counts)}")
    elif acc.count not in counts:
        yield Problem(f"{path}.count", f"{acc.count} {acc.type} on {mt}; allowed: {allowed(counts)}")


def rule_gpu_regions(job: Job, opts: Options) -> Iterator[Problem]:
    """Each GPU type offered in the region, and all of them in one zone of it (the GPU guide)."""
    ti = job.training_input
    region = ti.region
    if region is None or region not in catalog.TRAINING_REGIONS:
        return
    used = gpus_used(ti)
    if not used:
        return
    zones = catalog.REGION_ZONES.get(region, {})
    in_region = _region_gpus(region)
    missing = False
    for path, gpu in used:
        if gpu not in in_region:
            missing = True
            yield Problem(path, f"{gpu} is not offered in region {region}; allowed regions for {gpu}: "
                          f"{allowed(_gpu_regions(gpu))}")
    wanted = {gpu for _, gpu in used}
    if missing or len(wanted) < 2:
        return
    if any(wanted <= offered for offered in zones.values()):
        return
    per_zone = "; ".join(f"{z}: {', '.join(sorted(g & wanted)) or 'none'}" for z, g in zones.items())
    regions = sorted(r for r, zs in catalog.REGION_ZONES.items() if any(wanted <= g for g in zs.values()))
    yield Problem(f"{TI}.region", f"no zone of {region} offers all of {', '.join(sorted(wanted))} "
                  f"({per_zone}); allowed: regions with one zone offering all of them: {allowed(regions)}")


@lru_cache(maxsize=len(catalog.TRAINING_REGIONS))
def _region_gpus(region: str) -> frozenset[str]:
    """The GPU types some zone of a training region offers (catalog.REGION_ZONES), once per region and process."""
    return frozenset().union(*catalog.REGION_ZONES.get(region, {}).values())


@lru_cache(maxsize=len(catalog.GPU_ZONES))
def _gpu_regions(gpu: str) -> tuple[str, ...]:
    """The regions with a zone offering a GPU type (catalog.GPU_ZONES), sorted, once per type and process."""
    return tuple(sorted({z.rsplit("-", 1)[0] for z in catalog.GPU_ZONES[gpu]}))


def rule_tpu(job: Job, opts: Options) -> Iterator[Problem]:
    """The TPU guide: TPU region, runtime version, one cloud_tpu worker, no parameter servers, 8 cores."""
    ti = job.training_input
    if not uses_tpu(ti):
        return
    if ti.region is not None and ti.region not in catalog.TPU_REGIONS:
        yield Problem(f"{TI}.region", f"{ti.region!r} has no Cloud TPUs; allowed: "
                      f"{allowed(catalog.TPU_REGIONS)}")
    uses_container = bool(ti.master_config and ti.master_config.image_uri)
    missing_ok = opts.partial and ti.runtime_version is None
    if not uses_container and not missing_ok and ti.runtime_version not in catalog.TPU_RUNTIME_VERSIONS:
        shown = "missing" if ti.runtime_version is None else repr(ti.runtime_version)
        yield Problem(f"{TI}.runtimeVersion", f"{shown} for a TPU job; allowed: "
                      f"{allowed(catalog.TPU_RUNTIME_VERSIONS)}")
    if scale_tier(ti) != "CUSTOM":
        return
    if ti.worker_count != 1:
        yield Problem(f"{TI}.workerCount", f"{ti.worker_count} with workerType cloud_tpu; allowed: 1")
    if (ti.parameter_server_count or 0) > 0 or ti.parameter_server_type is not None:
        yield Problem(f"{TI}.parameterServerCount", "parameter servers are not allowed with a Cloud TPU "
                      "worker; allowed: 0 (leave parameterServerType and parameterServerCount unset)")
    acc = ti.worker_config.accelerator_config if ti.worker_config else None
    path = f"{TI}.workerConfig.acceleratorConfig"
    if acc is None:
        return
    master_ce = ti.master_type in catalog.COMPUTE_ENGINE_TYPES
    if not master_ce:
        yield Problem(path, f"is set but masterType {ti.master_type} is a legacy type; allowed only with a "
                      "Compute Engine master (e.g. n1-highcpu-16)")
        return
    if acc.type not in catalog.TPU_TYPES:
        yield Problem(f"{path}.type", f"{acc.type!r} on cloud_tpu; allowed: {allowed(catalog.TPU_TYPES)}")
    if acc.count != catalog.TPU_CORES:
        yield Problem(f"{path}.count", f"{acc.count} TPU cores on cloud_tpu; allowed: {catalog.TPU_CORES}")
