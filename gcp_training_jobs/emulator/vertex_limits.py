"""The emulator's own transcription of what Vertex AI custom training can run: machine types, the GPUs each takes
and in what numbers, the TPU machine types with their topologies. Data only; `vertex_checks` judges with it.

It is kept apart from the client's catalog (gcp_training_jobs/jobspec/catalog/vertex_machines.py) on purpose: the
emulator plays Google and must not share the code paths of the client it tests. `tests/test_emulator_sdk_tables.py`
compares the two transcriptions, so that a change to either that the other does not make fails a test.

Source: SOURCE, the configure-compute page, read 2026-11-23. Its "Valid numbers of GPUs for each machine type"
table: an accelerator-optimized type takes its own GPUs; N1 columns are P4, P100, T4, V100, and the N1 types past
four P100's bound (64 vCPUs, 208 GB) take no P100.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

SOURCE: Final = MappingProxyType({
    "title": "Configure compute resources for Gemini Enterprise Agent Platform serverless training",
    "url": "https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/configure-compute",
    "read": "2026-11-23",
    "note": "read whole",
})

#: "Machine types": the entries without the asterisk ("must be used with certain GPUs or TPUs"), page order.
#: The n1 types also take GPUs (N1_GPU_COUNTS) but run without them too.
PLAIN_MACHINE_TYPES: Final = (
    "e2-standard-4", "e2-standard-8", "e2-standard-16", "e2-standard-32",
    "e2-highmem-2", "e2-highmem-4", "e2-highmem-8", "e2-highmem-16", "e2-highcpu-16", "e2-highcpu-32",
    "n4-standard-2", "n4-standard-4", "n4-standard-8", "n4-standard-16", "n4-standard-32", "n4-standard-48",
    "n4-standard-64", "n4-standard-80",
    "n4-highmem-2", "n4-highmem-4", "n4-highmem-8", "n4-highmem-16", "n4-highmem-32", "n4-highmem-48",
    "n4-highmem-64", "n4-highmem-80",
    "n4-highcpu-2", "n4-highcpu-4", "n4-highcpu-8", "n4-highcpu-16", "n4-highcpu-32", "n4-highcpu-48",
    "n4-highcpu-64", "n4-highcpu-80",
    "n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32", "n2-standard-48", "n2-standard-64",
    "n2-standard-80",
    "n2-highmem-2", "n2-highmem-4", "n2-highmem-8", "n2-highmem-16", "n2-highmem-32", "n2-highmem-48",
    "n2-highmem-64", "n2-highmem-80",
    "n2-highcpu-16", "n2-highcpu-32", "n2-highcpu-48", "n2-highcpu-64", "n2-highcpu-80",
    "n1-standard-4", "n1-standard-8", "n1-standard-16", "n1-standard-32", "n1-standard-64", "n1-standard-96",
    "n1-highmem-2", "n1-highmem-4", "n1-highmem-8", "n1-highmem-16", "n1-highmem-32", "n1-highmem-64",
    "n1-highmem-96",
    "n1-highcpu-16", "n1-highcpu-32", "n1-highcpu-64", "n1-highcpu-96",
    "c2-standard-4", "c2-standard-8", "c2-standard-16", "c2-standard-30", "c2-standard-60",
    "m1-ultramem-40", "m1-ultramem-80", "m1-ultramem-160", "m1-megamem-96",
)

#: Accelerator-optimized types: (acceleratorType, the one acceleratorCount the table gives). Models: page,
#: "GPUDirect Networking" (a3-megagpu-8g: 8 H100 with GPUDirect-TCPXO, the NVIDIA_H100_MEGA_80GB entry;
#: a4x-highgpu-4g: 4 GB200; a3-ultragpu-8g / a4-highgpu-8g: "8 NVIDIA H200/B200"); the others are Compute
#: Engine's series (A3 High H100 80GB, A2 Ultra A100 80GB, A2 High / Mega A100 40GB = NVIDIA_TESLA_A100, G2 L4,
#: G4 RTX PRO 6000), cloud.google.com/compute/docs/gpus.
FIXED_GPUS: Final = MappingProxyType({
    "a3-megagpu-8g": ("NVIDIA_H100_MEGA_80GB", 8),
    "a3-highgpu-1g": ("NVIDIA_H100_80GB", 1),
    "a3-highgpu-2g": ("NVIDIA_H100_80GB", 2),
    "a3-highgpu-4g": ("NVIDIA_H100_80GB", 4),
    "a3-highgpu-8g": ("NVIDIA_H100_80GB", 8),
    "a3-ultragpu-8g": ("NVIDIA_H200_141GB", 8),
    "a4-highgpu-8g": ("NVIDIA_B200", 8),
    "a4x-highgpu-4g": ("NVIDIA_GB200", 4),
    "a2-ultragpu-1g": ("NVIDIA_A100_80GB", 1),
    "a2-ultragpu-2g": ("NVIDIA_A100_80GB", 2),
    "a2-ultragpu-4g": ("NVIDIA_A100_80GB", 4),
    "a2-ultragpu-8g": ("NVIDIA_A100_80GB", 8),
    "a2-highgpu-1g": ("NVIDIA_TESLA_A100", 1),
    "a2-highgpu-2g": ("NVIDIA_TESLA_A100", 2),
    "a2-highgpu-4g": ("NVIDIA_TESLA_A100", 4),
    "a2-highgpu-8g": ("NVIDIA_TESLA_A100", 8),
    "a2-megagpu-16g": ("NVIDIA_TESLA_A100", 16),
    "g2-standard-4": ("NVIDIA_L4", 1),
    "g2-standard-8": ("NVIDIA_L4", 1),
    "g2-standard-12": ("NVIDIA_L4", 1),
    "g2-standard-16": ("NVIDIA_L4", 1),
    "g2-standard-24": ("NVIDIA_L4", 2),
    "g2-standard-32": ("NVIDIA_L4", 1),
    "g2-standard-48": ("NVIDIA_L4", 4),
    "g2-standard-96": ("NVIDIA_L4", 8),
    "g4-standard-48": ("NVIDIA_RTX_PRO_6000", 1),
    "g4-standard-96": ("NVIDIA_RTX_PRO_6000", 2),
    "g4-standard-192": ("NVIDIA_RTX_PRO_6000", 4),
    "g4-standard-384": ("NVIDIA_RTX_PRO_6000", 8),
})

_P4, _P100, _T4, _V100 = "NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100"


def _row(p4: tuple[int, ...], p100: tuple[int, ...], t4: tuple[int, ...],
         v100: tuple[int, ...]) -> MappingProxyType[str, tuple[int, ...]]:
    """One N1 row of the table, in its column order (an empty tuple: the cell is empty)."""
    cells = {_P4: p4, _P100: p100, _T4: t4, _V100: v100}
    return MappingProxyType({gpu: counts for gpu, counts in cells.items() if counts})


#: N1 types: attachable GPU -> the acceleratorCount values the table allows.
N1_GPU_COUNTS: Final = MappingProxyType({
    "n1-standard-4": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    "n1-standard-8": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    "n1-standard-16": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (2, 4, 8)),
    "n1-standard-32": _row((2, 4), (2, 4), (2, 4), (4, 8)),
    "n1-standard-64": _row((4,), (), (4,), (8,)),
    "n1-standard-96": _row((4,), (), (4,), (8,)),
    "n1-highmem-2": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    "n1-highmem-4": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    "n1-highmem-8": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    "n1-highmem-16": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (2, 4, 8)),
    "n1-highmem-32": _row((2, 4), (2, 4), (2, 4), (4, 8)),
    "n1-highmem-64": _row((4,), (), (4,), (8,)),
    "n1-highmem-96": _row((4,), (), (4,), (8,)),
    "n1-highcpu-16": _row((1, 2, 4), (1, 2, 4), (1, 2, 4), (2, 4, 8)),
    "n1-highcpu-32": _row((2, 4), (2, 4), (2, 4), (4, 8)),
    "n1-highcpu-64": _row((4,), (4,), (4,), (8,)),
    "n1-highcpu-96": _row((4,), (), (4,), (8,)),
})

#: "TPU v2 and v3": machineType cloud-tpu, acceleratorCount "8 for single TPU or 32 or multiple of 32 for TPU
#: Pods" (TPU_V2), "8 for single TPU or 32+ for TPU Pods" (TPU_V3). Value: (single TPU, smallest Pod, the step
#: between Pod sizes: 32 for "multiple of 32", 1 for "32+").
CLOUD_TPU: Final = "cloud-tpu"
CLOUD_TPU_COUNTS: Final = MappingProxyType({
    "TPU_V2": (8, 32, 32),
    "TPU_V3": (8, 32, 1),
})

#: Where Vertex AI runs TPU Pods (cloud-tpu with more cores than a single TPU's 8), by region: the locations page's
#: "TPU v2 Pod" and "TPU v3 Pod" entries (https://cloud.google.com/vertex-ai/docs/general/locations, now published
#: at https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/general/locations, read
#: 2026-11-22). Fewer regions than the single TPUs: asia-east1 has a TPU v2 but no Pod, us-central1 a TPU v3 but
#: no v3 Pod. A region not named runs none.
TPU_POD_REGIONS: Final = MappingProxyType({
    "europe-west4": ("TPU_V2", "TPU_V3"),
    "us-central1": ("TPU_V2",),
})

#: TPU VMs (v5e ct5lp, v6e ct6e, TPU7x tpu7x): (the acceleratorType they take, "" for none, as no page sets one
#: and the enum has no value for v6e or TPU7x; the tpuTopology values of the page's tables, in table order).
#: ct5lp is paired with TPU_V5_LITEPOD by the enum's description ("TPU v5").
TPU_VM_TOPOLOGIES: Final = MappingProxyType({
    "ct5lp-hightpu-1t": ("TPU_V5_LITEPOD", ("1x1",)),
    "ct5lp-hightpu-4t": ("TPU_V5_LITEPOD", ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
    "ct5lp-hightpu-8t": ("TPU_V5_LITEPOD", ("2x4",)),
    "ct6e-standard-1t": ("", ("1x1",)),
    "ct6e-standard-4t": ("", ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
    "ct6e-standard-8t": ("", ("2x4",)),
    "tpu7x-standard-4t": ("", ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16")),
})

#: Every machine type the emulator's Vertex AI runs.
MACHINE_TYPES: Final = frozenset(
    {*PLAIN_MACHINE_TYPES, *FIXED_GPUS, *N1_GPU_COUNTS, CLOUD_TPU, *TPU_VM_TOPOLOGIES}
)


def accelerators(machine_type: str) -> tuple[str, ...]:
    """The acceleratorType values a machine type takes (empty: none)."""
    if machine_type in FIXED_GPUS:
        return (FIXED_GPUS[machine_type][0],)
    if machine_type in N1_GPU_COUNTS:
        return tuple(N1_GPU_COUNTS[machine_type])
    if machine_type == CLOUD_TPU:
        return tuple(CLOUD_TPU_COUNTS)
    host = TPU_VM_TOPOLOGIES.get(machine_type)
    return (host[0],) if host and host[0] else ()


def counts_allowed(machine_type: str, accelerator: str, count: int) -> bool:
    """Whether `count` accelerators of a type the machine takes are allowed (True where no page gives numbers)."""
    if machine_type in FIXED_GPUS:
        return count == FIXED_GPUS[machine_type][1]
    if machine_type in N1_GPU_COUNTS:
        return count in N1_GPU_COUNTS[machine_type][accelerator]
    if machine_type == CLOUD_TPU:
        single, pod, step = CLOUD_TPU_COUNTS[accelerator]
        return count == single or (count >= pod and (count - pod) % step == 0)
    return True  # TPU VMs: the pages give topologies, not counts


def pod_offered(machine_type: str, accelerator: str, count: int | None, region: str) -> bool:
    """Whether a machine spec that is a TPU Pod (cloud-tpu past the single TPU's count) runs in `region` (True for
    anything but a Pod)."""
    if machine_type != CLOUD_TPU or accelerator not in CLOUD_TPU_COUNTS or count is None:
        return True
    return count <= CLOUD_TPU_COUNTS[accelerator][0] or accelerator in TPU_POD_REGIONS.get(region, ())


def counts_shown(machine_type: str, accelerator: str) -> str:
    """The allowed counts as Vertex lists them in its refusal ("1, 2, 4"); cloud-tpu's Pods as a rule."""
    if machine_type in FIXED_GPUS:
        return str(FIXED_GPUS[machine_type][1])
    if machine_type in N1_GPU_COUNTS:
        return ", ".join(str(c) for c in N1_GPU_COUNTS[machine_type][accelerator])
    single, pod, step = CLOUD_TPU_COUNTS[accelerator]
    return f"{single}, {pod}, {pod + step}, ..." if step > 1 else f"{single}, {pod}, {pod + 1}, ..."


# ----------------------------------------------------------------------------------------- persistent resources

#: Where the persistent resource facts below were read (2026-11-26): the REST reference of
#: projects.locations.persistentResources (the same text as the discovery document google-api-python-client 2.202.0
#: ships, googleapiclient/discovery_cache/documents/aiplatform.v1.json), DiskSpec and ResourcePoolAutoscalingSpec,
#: and "Run training jobs on a persistent resource" (a job's pools and the resource's).
PERSISTENT_RESOURCE_SOURCES: Final = (
    MappingProxyType({
        "title": "Method: projects.locations.persistentResources.create",
        "url": "https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.persistentResources/create",
        "read": "2026-11-26",
        "note": "persistentResourceId: at most 63 characters of /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/",
    }),
    MappingProxyType({
        "title": "DiskSpec and ResourcePoolAutoscalingSpec (Vertex AI REST reference, v1)",
        "url": "https://cloud.google.com/vertex-ai/docs/reference/rest/v1/DiskSpec",
        "read": "2026-11-26",
        "note": "boot disk 100 GB by default; pd-ssd, hyperdisk-balanced for A3U machines; autoscaling: "
                "min_replica_count > 0 for a PersistentResource, <= replica_count and < max_replica_count",
    }),
    MappingProxyType({
        "title": "Run training jobs on a persistent resource",
        "url": "https://cloud.google.com/vertex-ai/docs/training/persistent-resource-train",
        "read": "2026-11-26",
        "note": "machine type and disk type match a resource pool exactly; replica count <= the pool's replica "
                "count or max replica count",
    }),
)

#: persistentResourceId (and a CustomJobSpec's persistentResourceId): 1 to 63 characters.
PERSISTENT_RESOURCE_ID: Final = r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?"
#: DiskSpec when a pool leaves it unset: bootDiskSizeGb, and bootDiskType by machine type ("A3U": a3-ultragpu-*).
BOOT_DISK_SIZE_GB: Final = 100
BOOT_DISK_TYPE: Final = "pd-ssd"
BOOT_DISK_TYPE_HYPERDISK: Final = "hyperdisk-balanced"
BOOT_DISK_HYPERDISK_MACHINES: Final = ("a3-ultragpu-8g", "a4-highgpu-8g")
#: Machine types that boot only from Hyperdisk: Compute Engine's A4X, A4 and A3 Ultra limitations, "You can't use
#: Persistent Disk (regional or zonal). You can only use Google Cloud Hyperdisk."
#: (https://cloud.google.com/compute/docs/accelerator-optimized-machines, read 2026-11-28); Vertex refuses any other
#: boot disk type on them (vertex_checks).
HYPERDISK_ONLY_MACHINES: Final = ("a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g")


def boot_disk(machine_type: str, disk: dict[str, object] | None) -> tuple[str, int]:
    """A pool's boot disk (type, size in GB) with Vertex's defaults filled in where the DiskSpec leaves them unset."""
    disk = disk or {}
    default = BOOT_DISK_TYPE_HYPERDISK if machine_type in BOOT_DISK_HYPERDISK_MACHINES else BOOT_DISK_TYPE
    size = disk.get("bootDiskSizeGb")
    return str(disk.get("bootDiskType") or default), int(str(size)) if size else BOOT_DISK_SIZE_GB
