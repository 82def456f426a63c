"""Facts about Google Cloud training hardware, as data: no rules live here (see rules.py).

Every table names its source. "seed 000" and "seed 001" are the AI Platform Training guides to TPUs
and GPUs kept in ../shared/seeds/ (Portuguese translations of cloud.google.com/ai-platform/training/
docs/using-tpus and .../using-gpus).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

# --- Accelerators -------------------------------------------------------------------------------

K80: Final = "NVIDIA_TESLA_K80"
P4: Final = "NVIDIA_TESLA_P4"
P100: Final = "NVIDIA_TESLA_P100"
T4: Final = "NVIDIA_TESLA_T4"
V100: Final = "NVIDIA_TESLA_V100"
A100: Final = "NVIDIA_TESLA_A100"
TPU_V2: Final = "TPU_V2"
TPU_V3: Final = "TPU_V3"

#: GPU types a trainingInput may attach (seed 001, "NVIDIA_TESLA_*" list, plus K80 from its table).
GPU_TYPES: Final = (K80, P4, P100, T4, V100, A100)
#: TPU types for a cloud_tpu worker's acceleratorConfig (seed 000 names TPU_V2; TPU_V3 is the other
#: single-device value of ml.v1.json's AcceleratorConfig.type enum; the *_POD values are not single jobs).
TPU_TYPES: Final = (TPU_V2, TPU_V3)
#: A cloud_tpu worker takes exactly this many TPU cores (seed 000: "no other number of TPU v2 cores").
TPU_CORES: Final = 8
ACCELERATOR_TYPES: Final = GPU_TYPES + TPU_TYPES

# --- Compute Engine machine types and the GPUs they take -----------------------------------------

_N1_SMALL = {K80: (1, 2, 4, 8), P4: (1, 2, 4), P100: (1, 2, 4), T4: (1, 2, 4), V100: (1, 2, 4, 8)}
_N1_16 = {K80: (2, 4, 8), P4: (1, 2, 4), P100: (1, 2, 4), T4: (1, 2, 4), V100: (2, 4, 8)}
_N1_32 = {K80: (4, 8), P4: (2, 4), P100: (2, 4), T4: (2, 4), V100: (4, 8)}
_N1_HIGHCPU_64 = {K80: (8,), P4: (4,), P100: (4,), T4: (4,), V100: (8,)}
_N1_LARGE = {P4: (4,), T4: (4,), V100: (8,)}

#: Valid GPU counts per Compute Engine machine type. Source: seed 001, table "Números válidos de GPUs
#: para cada tipo de máquina" (every cell; A100 only on a2, which take exactly their built-in count).
#: The table is shaped by vCPU and memory limits: each V100 brings at most 12 vCPUs and 76 GB, four
#: P100 at most 64 vCPUs and 208 GB (seed 001, restriction 2).
GPU_COUNTS: Final[Mapping[str, Mapping[str, tuple[int, ...]]]] = MappingProxyType({
    "n1-standard-4": _N1_SMALL,
    "n1-standard-8": _N1_SMALL,
    "n1-standard-16": _N1_16,
    "n1-standard-32": _N1_32,
    "n1-standard-64": _N1_LARGE,
    "n1-standard-96": _N1_LARGE,
    "n1-highmem-2": _N1_SMALL,
    "n1-highmem-4": _N1_SMALL,
    "n1-highmem-8": _N1_SMALL,
    "n1-highmem-16": _N1_16,
    "n1-highmem-32": _N1_32,
    "n1-highmem-64": _N1_LARGE,
    "n1-highmem-96": _N1_LARGE,
    "n1-highcpu-16": _N1_16,
    "n1-highcpu-32": _N1_32,
    "n1-highcpu-64": _N1_HIGHCPU_64,
    "n1-highcpu-96": _N1_LARGE,
    "a2-highgpu-1g": {A100: (1,)},
    "a2-highgpu-2g": {A100: (2,)},
    "a2-highgpu-4g": {A100: (4,)},
    "a2-highgpu-8g": {A100: (8,)},
    "a2-megagpu-16g": {A100: (16,)},
})

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

COMPUTE_ENGINE_TYPES: Final = tuple(GPU_COUNTS) + CE_TYPES_WITHOUT_GPUS

# --- Legacy AI Platform machine types -------------------------------------------------------------

CLOUD_TPU: Final = "cloud_tpu"

#: Legacy machine types and the GPUs built into them, as (type, count); None for none.
#: Source: seed 001, "Tipos de máquina com GPUs incluídas" (standard_gpu and the *_gpu types are K80s,
#: the seed's "BASIC_GPU ... uma GPU" tier is one K80 too); CPU-only types from the machine-types page.
LEGACY_GPUS: Final[Mapping[str, tuple[str, int] | None]] = MappingProxyType({
    "standard": None,
    "large_model": None,
    "complex_model_s": None,
    "complex_model_m": None,
    "complex_model_l": None,
    "standard_gpu": (K80, 1),
    "complex_model_m_gpu": (K80, 4),
    "complex_model_l_gpu": (K80, 8),
    "standard_p100": (P100, 1),
    "complex_model_m_p100": (P100, 4),
    "standard_v100": (V100, 1),
    "large_model_v100": (V100, 1),
    "complex_model_m_v100": (V100, 4),
    "complex_model_l_v100": (V100, 8),
})

#: The Compute Engine machine each CPU-only legacy type corresponds to. Sources: seed 001 gives the same
#: cluster twice, with complex_model_m_gpu / large_model and with n1-highcpu-16 (+4 GPUs) / n1-highmem-8;
#: the machine-types page gives standard as 4 vCPUs and 15 GB (n1-standard-4) and complex_model_l as twice
#: complex_model_m. complex_model_s (n1-highcpu-8) has no equivalent that Vertex AI training accepts.
LEGACY_BASE: Final[Mapping[str, str | None]] = MappingProxyType({
    "standard": "n1-standard-4",
    "large_model": "n1-highmem-8",
    "complex_model_s": None,
    "complex_model_m": "n1-highcpu-16",
    "complex_model_l": "n1-highcpu-32",
})

#: What each GPU legacy type is built on. Source: ml.v1.json, TrainingInput.masterType ("standard_gpu: A
#: machine equivalent to standard that also includes a single NVIDIA Tesla K80 GPU", and so on).
LEGACY_GPU_BASE: Final[Mapping[str, str]] = MappingProxyType({
    "standard_gpu": "standard",
    "complex_model_m_gpu": "complex_model_m",
    "complex_model_l_gpu": "complex_model_l",
    "standard_p100": "standard",
    "complex_model_m_p100": "complex_model_m",
    "standard_v100": "standard",
    "large_model_v100": "large_model",
    "complex_model_m_v100": "complex_model_m",
    "complex_model_l_v100": "complex_model_l",
})


def legacy_equivalent(machine_type: str) -> str | None:
    """The Compute Engine type a legacy type ran on, or None where none is documented."""
    return LEGACY_BASE.get(LEGACY_GPU_BASE.get(machine_type, machine_type))


LEGACY_TYPES: Final = tuple(LEGACY_GPUS)
MACHINE_TYPES: Final = COMPUTE_ENGINE_TYPES + LEGACY_TYPES + (CLOUD_TPU,)

# --- Scale tiers ----------------------------------------------------------------------------------

#: Source: ml.v1.json, TrainingInput.scaleTier enum.
SCALE_TIERS: Final = ("BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU", "CUSTOM")
DEFAULT_SCALE_TIER: Final = "BASIC"
#: Predefined tiers with GPUs built in. Source: seed 001 ("BASIC_GPU ... uma única instância de worker
#: com uma GPU"; the machine-types page names it an NVIDIA Tesla K80).
TIER_GPUS: Final[Mapping[str, tuple[str, int]]] = MappingProxyType({"BASIC_GPU": (K80, 1)})
#: The one machine a single-VM tier runs on (machine-types page: BASIC is one `standard` machine,
#: BASIC_GPU one `standard_gpu`, BASIC_TPU a `standard` master plus a Cloud TPU worker). STANDARD_1 and
#: PREMIUM_1 have no documented composition ("many workers and a few parameter servers").
TIER_MASTER: Final[Mapping[str, str]] = MappingProxyType({
    "BASIC": "standard",
    "BASIC_GPU": "standard_gpu",
    "BASIC_TPU": "standard",
})

# --- Regions and zones ----------------------------------------------------------------------------

#: Regions where AI Platform Training offers GPUs. Source: seed 001, "Regiões compatíveis com GPUs".
GPU_REGIONS: Final = (
    "us-west1", "us-west2", "us-central1", "us-east1", "us-east4",
    "northamerica-northeast1", "southamerica-east1",
    "europe-west1", "europe-west2", "europe-west4",
    "asia-south1", "asia-southeast1", "asia-east1", "asia-northeast1", "asia-northeast3",
    "australia-southeast1",
)

#: Regions a training job may name at all: the GPU regions (seed 001) plus none other documented by the
#: seeds; a job without accelerators is held to the same list.
TRAINING_REGIONS: Final = GPU_REGIONS

#: Zones offering each GPU type, for the regions above. Source: Compute Engine "GPU regions and zones"
#: (cloud.google.com/compute/docs/gpus/gpu-regions-zones), as scraped in 2022 into the public file
#: skypilot-org/skypilot sky/clouds/service_catalog/data_fetchers/gcp_data/zones/gpu.csv, with one
#: exception taken from seed 001: that table lists T4 in us-central1-c, added after the seed was written;
#: the seed states that no us-central1 zone offered T4, K80 and P100 together, so T4 is us-central1-a, -b
#: and -f here (K80 a, c; P100 c, f).
GPU_ZONES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    K80: (
        "us-central1-a", "us-central1-c", "us-east1-c", "us-east1-d", "us-west1-b",
        "europe-west1-b", "europe-west1-d", "asia-east1-a", "asia-east1-b",
    ),
    P4: (
        "us-central1-a", "us-central1-c", "us-east4-a", "us-east4-b", "us-east4-c",
        "us-west2-b", "us-west2-c", "northamerica-northeast1-a", "northamerica-northeast1-b",
        "northamerica-northeast1-c", "europe-west4-b", "europe-west4-c", "asia-southeast1-b",
        "asia-southeast1-c", "australia-southeast1-a", "australia-southeast1-b",
    ),
    P100: (
        "us-central1-c", "us-central1-f", "us-east1-b", "us-east1-c", "us-west1-a", "us-west1-b",
        "europe-west1-b", "europe-west1-d", "europe-west4-a", "asia-east1-a", "asia-east1-c",
        "australia-southeast1-c",
    ),
    T4: (
        "us-central1-a", "us-central1-b", "us-central1-f", "us-east1-c", "us-east1-d",
        "us-east4-b", "us-east4-c", "us-west1-a", "us-west1-b", "us-west2-b",
        "us-west2-c", "northamerica-northeast1-c", "southamerica-east1-b", "southamerica-east1-c",
        "europe-west1-b", "europe-west1-c", "europe-west1-d", "europe-west2-a", "europe-west2-b",
        "europe-west4-a", "europe-west4-b", "europe-west4-c", "asia-east1-a", "asia-east1-c",
        "asia-northeast1-a", "asia-northeast1-c",
        "asia-northeast3-b", "asia-northeast3-c", "asia-south1-a", "asia-south1-b",
        "asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c", "australia-southeast1-a",
        "australia-southeast1-c",
    ),
    V100: (
        "us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-east1-c",
        "us-west1-a", "us-west1-b", "europe-west4-a", "europe-west4-b", "europe-west4-c",
        "asia-east1-c",
    ),
    A100: (
        "us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-east1-b",
        "us-west1-b", "europe-west4-a", "europe-west4-b", "asia-northeast1-a", "asia-northeast1-c",
        "asia-northeast3-a", "asia-northeast3-b", "asia-southeast1-b", "asia-southeast1-c",
    ),
})


def _zones_by_region() -> Mapping[str, Mapping[str, frozenset[str]]]:
    table: dict[str, dict[str, set[str]]] = {}
    for gpu, zones in GPU_ZONES.items():
        for zone in zones:
            region = zone.rsplit("-", 1)[0]
            table.setdefault(region, {}).setdefault(zone, set()).add(gpu)
    return MappingProxyType({
        region: MappingProxyType({zone: frozenset(gpus) for zone, gpus in sorted(zones.items())})
        for region, zones in table.items()
    })


#: region -> zone -> GPU types offered there (derived from GPU_ZONES).
REGION_ZONES: Final = _zones_by_region()

#: Regions with Cloud TPUs for training. Source: seed 000, "Como especificar uma região que oferece TPUs".
TPU_REGIONS: Final = ("us-central1",)

# --- Runtime versions -----------------------------------------------------------------------------

#: AI Platform runtime versions available to Cloud TPU jobs. Source: seed 000 names 1.11 and 1.12; the
#: AI Platform Training runtime version list (cloud.google.com/ai-platform/training/docs/runtime-version-
#: list) later offered Cloud TPU on the releases after them, 1.13 to 1.15 and 2.1 to 2.11 (public job
#: configs run BASIC_TPU on 1.13 and tpuTfVersion 1.15).
TPU_RUNTIME_VERSIONS: Final = (
    "1.11", "1.12", "1.13", "1.14", "1.15",
    "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11",
)

#: Runtime versions and the Python versions each offers. Source: AI Platform Training runtime version
#: list: 1.x runtimes ran Python 2.7 and 3.5 (3.7 from 1.15), 2.x runtimes Python 3.7.
RUNTIME_PYTHON_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    **{f"1.{minor}": ("2.7", "3.5") for minor in range(0, 15)},
    "1.15": ("2.7", "3.7"),
    **{f"2.{minor}": ("3.7",) for minor in range(1, 12)},
})
RUNTIME_VERSIONS: Final = tuple(RUNTIME_PYTHON_VERSIONS)

# --- Task roles -----------------------------------------------------------------------------------

#: The four task roles of a trainingInput, in the order Vertex AI numbers its worker pools.
ROLES: Final = ("master", "worker", "parameterServer", "evaluator")

# --- Vertex AI custom training ----------------------------------------------------------------------

#: Accelerators Vertex AI no longer offers, with why. Source: aiplatform.v1.json, MachineSpec.
#: acceleratorType: "Deprecated: Nvidia Tesla K80 GPU has reached end of support, see
#: https://cloud.google.com/compute/docs/eol/k80-eol" (end of support 2024-05-01).
VERTEX_RETIRED_ACCELERATORS: Final[Mapping[str, str]] = MappingProxyType({
    K80: "NVIDIA Tesla K80 reached end of support on 2024-05-01 (cloud.google.com/compute/docs/eol/k80-eol)",
})

#: The machine type of a Vertex AI TPU worker pool (TPU v2/v3 devices, 8 cores each). Source: Vertex AI
#: "Training with TPU VMs": machineSpec {machineType: cloud-tpu, acceleratorType: TPU_V2|TPU_V3,
#: acceleratorCount: 8}.
VERTEX_TPU_MACHINE: Final = "cloud-tpu"

#: Prebuilt TensorFlow training containers for an AI Platform runtime version on Python 3.7. Source:
#: Vertex AI "Prebuilt containers for custom training" (cloud.google.com/vertex-ai/docs/training/
#: pre-built-containers): tf-cpu.N-M and tf-gpu.N-M (Python 3.7) exist for 1.15, 2.1 to 2.9 and 2.11;
#: there is no 2.10 image and none for runtimes before 1.15. Vertex offers no prebuilt TPU image for these
#: versions (its tf-tpu images start at 2.12), so TPU jobs on Vertex need a custom container.
VERTEX_TF_CONTAINERS: Final[Mapping[str, str]] = MappingProxyType({
    "1.15": "1-15",
    **{f"2.{minor}": f"2-{minor}" for minor in (1, 2, 3, 4, 5, 6, 7, 8, 9, 11)},
})
VERTEX_CONTAINER_PYTHON: Final = "3.7"
#: A job that names no runtimeVersion (gcloud's config.yaml may leave it to a flag) gets the newest
#: runtime with a prebuilt container, and a TPU pool Vertex's first TPU image, tf-tpu.2-12 (same source).
VERTEX_DEFAULT_RUNTIME: Final = "2.11"
VERTEX_DEFAULT_TPU_IMAGE: Final = "tf-tpu.2-12"

#: Artifact Registry host of the prebuilt containers per continent of the job's region (same source).
VERTEX_CONTAINER_HOSTS: Final[Mapping[str, str]] = MappingProxyType({
    "us": "us-docker.pkg.dev",
    "northamerica": "us-docker.pkg.dev",
    "southamerica": "us-docker.pkg.dev",
    "europe": "europe-docker.pkg.dev",
    "asia": "asia-docker.pkg.dev",
    "australia": "asia-docker.pkg.dev",
})
