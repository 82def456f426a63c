"""Accelerator names (the enum values of ml.v1.json's AcceleratorConfig.type and aiplatform.v1.json's
MachineSpec.acceleratorType) and which ones AI Platform Training offered. Data only.

Sources: ai_platform_pages (the AI Platform Training GPU and TPU guides, the ml v1 discovery document), named
per table.
"""

from __future__ import annotations

from typing import Final

from gcp_training_jobs.jobspec.catalog.ai_platform_pages import (
    SOURCE_ML_V1_DISCOVERY,
    SOURCE_USING_GPUS,
    SOURCE_USING_TPUS,
)

K80: Final = "NVIDIA_TESLA_K80"
P4: Final = "NVIDIA_TESLA_P4"
P100: Final = "NVIDIA_TESLA_P100"
T4: Final = "NVIDIA_TESLA_T4"
V100: Final = "NVIDIA_TESLA_V100"
A100: Final = "NVIDIA_TESLA_A100"
TPU_V2: Final = "TPU_V2"
TPU_V3: Final = "TPU_V3"

#: GPU types a trainingInput may attach (the AI Platform Training GPU guide's "NVIDIA_TESLA_*" list, plus K80
#: from its table of valid GPU counts; all six are values of ml.v1.json's AcceleratorConfig.type).
GPU_TYPES: Final = (K80, P4, P100, T4, V100, A100)
GPU_TYPES_SOURCES: Final = (SOURCE_USING_GPUS, SOURCE_ML_V1_DISCOVERY)
#: TPU types for a cloud_tpu worker's acceleratorConfig (the AI Platform Training TPU guide names TPU_V2; TPU_V3
#: is the other single-device value of ml.v1.json's AcceleratorConfig.type enum; the *_POD values are not
#: single jobs).
TPU_TYPES: Final = (TPU_V2, TPU_V3)
TPU_TYPES_SOURCES: Final = (SOURCE_USING_TPUS, SOURCE_ML_V1_DISCOVERY)
#: A cloud_tpu worker takes exactly this many TPU cores (the TPU guide: no other number of TPU v2 cores).
TPU_CORES: Final = 8
TPU_CORES_SOURCES: Final = (SOURCE_USING_TPUS,)
ACCELERATOR_TYPES: Final = GPU_TYPES + TPU_TYPES
ACCELERATOR_TYPES_SOURCES: Final = GPU_TYPES_SOURCES + TPU_TYPES_SOURCES
