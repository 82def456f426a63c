"""Compute Engine machine types as AI Platform Training took them, and the GPUs each can attach. Data only.

Sources: ai_platform_pages (the AI Platform Training GPU guide and its machine-types page), and for the N1 GPU
counts Vertex AI's configure-compute page too (vertex_machines), named per table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.accelerators import A100, K80
from gcp_training_jobs.jobspec.catalog.ai_platform_pages import SOURCE_MACHINE_TYPES, SOURCE_USING_GPUS
from gcp_training_jobs.jobspec.catalog.vertex_machines import N1_GPU_COUNTS, SOURCE_CONFIGURE_COMPUTE

#: The K80 column of the AI Platform Training GPU guide's table; Vertex AI's configure-compute page has none.
_K80_COUNTS: Final = {
    "n1-standard-4": (1, 2, 4, 8), "n1-standard-8": (1, 2, 4, 8), "n1-standard-16": (2, 4, 8),
    "n1-standard-32": (4, 8), "n1-highmem-2": (1, 2, 4, 8), "n1-highmem-4": (1, 2, 4, 8),
    "n1-highmem-8": (1, 2, 4, 8), "n1-highmem-16": (2, 4, 8), "n1-highmem-32": (4, 8), "n1-highcpu-16": (2, 4, 8),
    "n1-highcpu-32": (4, 8), "n1-highcpu-64": (8,),
}

#: Valid GPU counts per Compute Engine machine type. Source: the AI Platform Training GPU guide, table "Números
#: válidos de GPUs para cada tipo de máquina" (valid numbers of GPUs for each machine type: every cell; A100
#: only on a2, which take exactly their built-in count). The table is shaped by vCPU and memory limits: each
#: V100 brings at most 12 vCPUs and 76 GB, four P100 at most 64 vCPUs and 208 GB (the guide's restriction 2).
#: Its P4, P100, T4 and V100 columns say what Vertex AI's configure-compute page says, cell for cell: one table,
#: vertex_machines.N1_GPU_COUNTS, holds them (citing both pages), and this one adds the guide's K80 column.
GPU_COUNTS: Final[Mapping[str, Mapping[str, tuple[int, ...]]]] = MappingProxyType({
    **{machine: MappingProxyType({K80: _K80_COUNTS[machine], **counts} if machine in _K80_COUNTS else counts)
       for machine, counts in N1_GPU_COUNTS.items()},
    "a2-highgpu-1g": {A100: (1,)},
    "a2-highgpu-2g": {A100: (2,)},
    "a2-highgpu-4g": {A100: (4,)},
    "a2-highgpu-8g": {A100: (8,)},
    "a2-megagpu-16g": {A100: (16,)},
})
GPU_COUNTS_SOURCES: Final = (SOURCE_USING_GPUS, SOURCE_CONFIGURE_COMPUTE)

#: Compute Engine machine types AI Platform Training accepts that take no GPUs. Source: AI Platform
#: Training "Specifying machine types" page (cloud.google.com/ai-platform/training/docs/machine-types,
#: "Compute Engine machine types"): e2, n2 and m1 families; GPUs attach to n1 and a2 only.
CE_TYPES_WITHOUT_GPUS: Final = (
    "e2-standard-4", "e2-standard-8", "e2-standard-16", "e2-standard-32",
    "e2-highmem-2", "e2-highmem-4", "e2-highmem-8", "e2-highmem-16",
    "e2-highcpu-16", "e2-highcpu-32",
    "n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32", "n2-standard-48",
    "n2-standard-64", "n2-standard-80",
    "n2-highmem-2", "n2-highmem-4", "n2-highmem-8", "n2-highmem-16", "n2-highmem-32",
    "n2-highmem-48", "n2-highmem-64", "n2-highmem-80",
    "n2-highcpu-16", "n2-highcpu-32", "n2-highcpu-48", "n2-highcpu-64", "n2-highcpu-80",
    "m1-ultramem-40", "m1-ultramem-80", "m1-ultramem-160", "m1-megamem-96",
)
CE_TYPES_WITHOUT_GPUS_SOURCES: Final = (SOURCE_MACHINE_TYPES,)

COMPUTE_ENGINE_TYPES: Final = tuple(GPU_COUNTS) + CE_TYPES_WITHOUT_GPUS
COMPUTE_ENGINE_TYPES_SOURCES: Final = GPU_COUNTS_SOURCES + CE_TYPES_WITHOUT_GPUS_SOURCES
