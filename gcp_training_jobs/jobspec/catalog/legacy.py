"""Legacy AI Platform Training machine types, scale tiers and task roles (ml.v1.json vocabulary). Data only.

Sources: ai_platform_pages (the AI Platform Training GPU and TPU guides, its machine-types page and the ml v1
discovery document), named per table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.accelerators import K80, P100, TPU_CORES, TPU_V2, V100
from gcp_training_jobs.jobspec.catalog.ai_platform_pages import (
    SOURCE_MACHINE_TYPES,
    SOURCE_ML_ENGINE_USING_GPUS,
    SOURCE_ML_V1_DISCOVERY,
    SOURCE_USING_GPUS,
    SOURCE_USING_TPUS,
)
from gcp_training_jobs.jobspec.catalog.machines import COMPUTE_ENGINE_TYPES, COMPUTE_ENGINE_TYPES_SOURCES

# --- Legacy AI Platform machine types -------------------------------------------------------------

CLOUD_TPU: Final = "cloud_tpu"

#: Legacy machine types and the GPUs built into them, as (type, count); None for none.
#: Sources: the AI Platform Training GPU guide, "Tipos de máquina com GPUs incluídas" (machine types with GPUs
#: included: the counts, and P100 / V100 by name); its earlier Cloud ML Engine edition names the GPU of
#: standard_gpu and the *_gpu types, a K80; the CPU-only types from the machine-types page.
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
LEGACY_GPUS_SOURCES: Final = (SOURCE_USING_GPUS, SOURCE_ML_ENGINE_USING_GPUS, SOURCE_MACHINE_TYPES)

#: The Compute Engine machine each CPU-only legacy type corresponds to. Sources: the GPU guide gives the same
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
LEGACY_BASE_SOURCES: Final = (SOURCE_USING_GPUS, SOURCE_MACHINE_TYPES)

#: What each GPU legacy type is built on. Source: ml.v1.json, TrainingInput.masterType ("standard_gpu: A
#: machine equivalent to standard that also includes a single NVIDIA Tesla K80 GPU", and so on), in a revision
#: earlier than the one SOURCE_ML_V1_DISCOVERY names (its note says so).
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
LEGACY_GPU_BASE_SOURCES: Final = (SOURCE_ML_V1_DISCOVERY,)


def legacy_equivalent(machine_type: str) -> str | None:
    """The Compute Engine type a legacy type ran on, or None where none is documented."""
    return LEGACY_BASE.get(LEGACY_GPU_BASE.get(machine_type, machine_type))


LEGACY_TYPES: Final = tuple(LEGACY_GPUS)
LEGACY_TYPES_SOURCES: Final = LEGACY_GPUS_SOURCES
MACHINE_TYPES: Final = COMPUTE_ENGINE_TYPES + LEGACY_TYPES + (CLOUD_TPU,)
MACHINE_TYPES_SOURCES: Final = COMPUTE_ENGINE_TYPES_SOURCES + LEGACY_TYPES_SOURCES + (SOURCE_USING_TPUS,)

# --- Scale tiers ----------------------------------------------------------------------------------

#: Source: ml.v1.json, TrainingInput.scaleTier enum.
SCALE_TIERS: Final = ("BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU", "CUSTOM")
SCALE_TIERS_SOURCES: Final = (SOURCE_ML_V1_DISCOVERY,)
DEFAULT_SCALE_TIER: Final = "BASIC"
#: Predefined tiers with GPUs built in. Source: the AI Platform Training GPU guide ("BASIC_GPU ... uma única
#: instância de worker com uma GPU": one worker with one GPU; its 2019 edition and the machine-types page name
#: it an NVIDIA Tesla K80).
TIER_GPUS: Final[Mapping[str, tuple[str, int]]] = MappingProxyType({"BASIC_GPU": (K80, 1)})
TIER_GPUS_SOURCES: Final = (SOURCE_USING_GPUS, SOURCE_ML_ENGINE_USING_GPUS, SOURCE_MACHINE_TYPES)
#: The one machine a single-VM tier runs on (machine-types page: BASIC is one `standard` machine,
#: BASIC_GPU one `standard_gpu`, BASIC_TPU a `standard` master plus a Cloud TPU worker). STANDARD_1 and
#: PREMIUM_1 have no documented composition ("many workers and a few parameter servers").
TIER_MASTER: Final[Mapping[str, str]] = MappingProxyType({
    "BASIC": "standard",
    "BASIC_GPU": "standard_gpu",
    "BASIC_TPU": "standard",
})
TIER_MASTER_SOURCES: Final = (SOURCE_MACHINE_TYPES,)
#: What each predefined tier runs, as (role, machine type, (accelerator, count per machine) or None): the one
#: statement of a tier's meaning (the sources above) that the rules, the Vertex translation, cost and the plan
#: read. BASIC_TPU's Cloud TPU worker has TPU_CORES TPU_V2 cores (the TPU guide). STANDARD_1 and PREMIUM_1 are
#: absent: the service chooses their machines.
TIER_MACHINES: Final[Mapping[str, tuple[tuple[str, str, tuple[str, int] | None], ...]]] = MappingProxyType({
    "BASIC": (("master", TIER_MASTER["BASIC"], None),),
    "BASIC_GPU": (("master", TIER_MASTER["BASIC_GPU"], TIER_GPUS["BASIC_GPU"]),),
    "BASIC_TPU": (("master", TIER_MASTER["BASIC_TPU"], None), ("worker", CLOUD_TPU, (TPU_V2, TPU_CORES))),
})
TIER_MACHINES_SOURCES: Final = TIER_MASTER_SOURCES + TIER_GPUS_SOURCES + (SOURCE_USING_TPUS,)
#: trainingInput.scheduling.maxRunningTime when unset. Source: ml.v1.json (google-api-python-client 2.202.0,
#: revision 20251213), GoogleCloudMlV1__Scheduling.maxRunningTime: "If not specified, this field defaults to
#: `604800s` (seven days). If the training job is still running after this duration, AI Platform Training
#: cancels it." The same words in Google's .NET client reference, https://googleapis.dev/dotnet/
#: Google.Apis.CloudMachineLearningEngine.v1/latest/api/Google.Apis.CloudMachineLearningEngine.v1.Data.
#: GoogleCloudMlV1Scheduling.html (read 2026-11-23). The worst case of an ml v1 job's cost.
DEFAULT_MAX_RUNNING_SECONDS: Final = 604800
DEFAULT_MAX_RUNNING_SECONDS_SOURCES: Final = (SOURCE_ML_V1_DISCOVERY,)

# --- Task roles -----------------------------------------------------------------------------------

#: The four task roles of a trainingInput, in the order Vertex AI numbers its worker pools (ml.v1.json's
#: TrainingInput: masterType, workerType, parameterServerType, evaluatorType; the GPU guide names the same four).
ROLES: Final = ("master", "worker", "parameterServer", "evaluator")
ROLES_SOURCES: Final = (SOURCE_ML_V1_DISCOVERY, SOURCE_USING_GPUS)
