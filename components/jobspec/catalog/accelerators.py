"""Accelerator names (the enum values of ml.v1.json's AcceleratorConfig.type and aiplatform.v1.json's
MachineSpec.acceleratorType) and which ones the seeds' AI Platform Training offered. Data only."""

from __future__ import annotations

from typing import Final

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
