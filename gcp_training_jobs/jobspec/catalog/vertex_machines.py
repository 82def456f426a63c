"""Vertex AI custom-training hardware as Google documents it: machine types, GPUs, TPUs. Data only.

What is here (read 2026-11-22):

- FIXED_ACCELERATOR_MACHINES: accelerator-optimized machine types (a2, a3, a4, a4x, g2, g4) whose GPU
  model and count come with the type; the only valid ``acceleratorCount`` for custom training is that count.
- N1_GPU_COUNTS: N1 machine types and the valid ``acceleratorCount`` values per attachable GPU.
- GPU_END_OF_SUPPORT: end-of-support dates that a Google page states.
- CPU_MACHINE_TYPES: machine types the page lists without the "must be used with GPUs or TPUs" mark.
- CLOUD_TPU_*: the ``cloud-tpu`` machine type (TPU v2 / v3) and its ``acceleratorCount`` values.
- TPU_HOSTS / TPU_SLICES: TPU VM machine types (v5e ``ct5lp-*``, v6e ``ct6e-*``, TPU7x ``tpu7x-*``) and the
  ``tpuTopology`` shapes each is documented with.

Accelerator strings are the ``GoogleCloudAiplatformV1MachineSpec.acceleratorType`` enum names of the
installed discovery document (aiplatform.v1.json, revision 20261106). Vertex AI has been renamed
"Gemini Enterprise Agent Platform" in Google's docs; the training page now lives under
docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/configure-compute and
calls custom training "serverless training". The API (aiplatform.googleapis.com) is unchanged.
"""

from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source


@dataclass(frozen=True)
class FixedMachine:
    family: str        # e.g. "a3-highgpu"
    accelerator: str   # acceleratorType enum name, e.g. "NVIDIA_H100_80GB"
    count: int         # exactly this many come with the type


@dataclass(frozen=True)
class TpuHost:
    accelerator: str             # acceleratorType enum name, "" when the enum has none (see TpuHost notes)
    chips_per_host: int          # TPU chips on one VM of this machine type
    topologies: tuple[str, ...]  # documented tpuTopology shapes for this machine type


_READ: Final = date(2026, 11, 22)

# ---------------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------------

SOURCE_CONFIGURE_COMPUTE: Final = Source(
    title="Configure compute resources for Gemini Enterprise Agent Platform serverless training",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/configure-compute",
    read=_READ,
    note=(
        "Whole page read. Successor of 'Configure compute resources for custom training' "
        "(cloud.google.com/vertex-ai/docs/training/configure-compute); the discovery document's "
        "MachineSpec.machineType description links this new URL. The page's text form flattens the GPU "
        "compatibility table (empty cells dropped), so column positions of some N1 rows are reconstructed; see "
        "N1_GPU_COLUMN_NOTE."
    ),
)

SOURCE_TRAINING_WITH_TPU: Final = Source(
    title="Training with TPU accelerators",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/training-with-tpu-vm",
    read=_READ,
    note=(
        "Whole page read. Formerly cloud.google.com/vertex-ai/docs/training/training-with-tpu-vm. Names TPU v2, "
        "v3, v5e, v6e; "
        "defers configuration (machine types, topologies) to the configure-compute page. No tpuTopology table "
        "and no replicaCount rule of its own."
    ),
)

SOURCE_DISCOVERY_MACHINESPEC: Final = Source(
    title="Agent Platform API discovery document (aiplatform v1), schema GoogleCloudAiplatformV1MachineSpec",
    url="https://aiplatform.googleapis.com/$discovery/rest?version=v1",
    read=_READ,
    note=(
        "Revision 20261106, as google-api-python-client 2.202.0 ships it (googleapiclient/discovery_cache/"
        "documents/aiplatform.v1.json); v1beta1 has the same enum. acceleratorType enum: NVIDIA_TESLA_K80 "
        "(marked deprecated: 'Nvidia Tesla K80 GPU has reached end of "
        "support'), NVIDIA_TESLA_P100, NVIDIA_TESLA_V100, NVIDIA_TESLA_P4, NVIDIA_TESLA_T4, NVIDIA_TESLA_A100, "
        "NVIDIA_A100_80GB, NVIDIA_L4, NVIDIA_H100_80GB, NVIDIA_H100_MEGA_80GB, NVIDIA_H200_141GB, NVIDIA_B200, "
        "NVIDIA_GB200, NVIDIA_RTX_PRO_6000, TPU_V2, TPU_V3, TPU_V4_POD, TPU_V5_LITEPOD. No value for TPU v6e "
        "or TPU7x. tpuTopology: 'Corresponds to the TPU topologies available from GKE. (Example: tpu_topology: "
        "\"2x2x1\")'."
    ),
)

SOURCE_GCE_GPU_MACHINE_TYPES: Final = Source(
    title="GPU machine types (Compute Engine)",
    url="https://cloud.google.com/compute/docs/gpus",
    read=_READ,
    note=(
        "The page's opening read (and cloud.google.com/compute/docs/gpus/create-gpu-vm-accelerator-optimized). "
        "Used only to name the GPU model each accelerator-optimized series carries: A4X = NVIDIA GB200 "
        "(nvidia-gb200), A4 = B200 (nvidia-b200), A3 Ultra = H200 (nvidia-h200-141gb), A3 Mega = H100 "
        "(nvidia-h100-mega-80gb), A3 High = H100 80GB, A2 Ultra = A100 80GB, A2 Standard = A100 40GB, "
        "G2 = L4. The G4 row of that table is past the part read; G4 = NVIDIA RTX PRO 6000 is taken from "
        "the Compute Engine release note (SOURCE_GCE_RELEASE_NOTES) 'G4 (NVIDIA RTX PRO 6000) machine series'."
    ),
)

SOURCE_GCE_RELEASE_NOTES: Final = Source(
    title="Compute Engine release notes, entry of September 22, 2026",
    url="https://docs.cloud.google.com/compute/docs/release-notes",
    read=_READ,
    note=(
        "The entry's words as several third-party release-note digests quote them verbatim (they agree): "
        "'As of September 15, 2026, NVIDIA P100 (nvidia-tesla-p100 and nvidia-tesla-p100-vws) "
        "GPUs have reached end of support (EOS) and are shut down.' and 'NVIDIA T4 (nvidia-tesla-t4 and "
        "nvidia-tesla-t4-vws) and NVIDIA P4 (nvidia-tesla-p4 and nvidia-tesla-p4-vws) GPUs are deprecated and "
        "will reach end of support (EOS) on August 1, 2027.' Links: docs.cloud.google.com/compute/docs/eol/"
        "p100-eos, .../t4-eos, .../p4-eos (those pages themselves were not read)."
    ),
)

SOURCE_K80_EOL: Final = Source(
    title="NVIDIA K80 end of support (Compute Engine)",
    url="https://cloud.google.com/compute/docs/eol/k80-eol",
    read=_READ,
    note=(
        "The page itself was not read. The API enum says K80 'has reached end of support'. The date 2024-05-01 "
        "is the one that texts citing this URL give (a Terraform comment 'EOL on GCP May 1, 2024: "
        "https://cloud.google.com/compute/docs/eol/k80-eol', a blog citing it) and matches this project's "
        "vertex_legacy.py. "
        "The configure-compute page no longer lists K80 at all (only its Python sample still uses it)."
    ),
)

# ---------------------------------------------------------------------------------------------------
# Accelerator-optimized machine types: GPUs fixed by the type
# ---------------------------------------------------------------------------------------------------

# Page, "Machine types": "* Machine types marked with asterisks in the preceding list must be used with
# certain GPUs or TPUs." Page, "GPUs": the compatibility table "lists the valid values for
# machineSpec.acceleratorCount depending on your choices for machineSpec.machineType and
# machineSpec.acceleratorType" and gives one value per accelerator-optimized type (a3-megagpu-8g 8,
# a3-highgpu-1g 1, ... a2-megagpu-16g 16, g2-standard-24 2, g2-standard-32 1, g4-standard-384 8).
# GPU model per family: page, "GPUDirect Networking": "The a3-megagpu-8g machine type has: 8 NVIDIA H100
# GPUs per machine" and NVIDIA_H100_MEGA_80GB "(includes GPUDirect-TCPXO)"; "The a4x-highgpu-4g machine
# types have: 4 GB200 GPUs per machine"; "The a3-ultragpu-8g and a4-highgpu-8g machine types have: 8 NVIDIA
# H200/B200 GPUs per machine"; "NVIDIA_TESLA_A100 (NVIDIA A100 40GB)". The remaining family -> model
# pairs (a2-ultragpu A100 80GB, a2-highgpu/a2-megagpu A100 40GB, a3-highgpu H100 80GB, g2 L4,
# g4 RTX PRO 6000) are Compute Engine facts, see SOURCE_GCE_GPU_MACHINE_TYPES.
# Note: the MachineSpec.acceleratorCount description allows 1..N on an N-GPU type with co-scheduling, but
# that is for model serving; the training page lists only the full count.
FIXED_ACCELERATOR_MACHINES: Final = MappingProxyType({
    "a4x-highgpu-4g": FixedMachine("a4x-highgpu", "NVIDIA_GB200", 4),
    "a4-highgpu-8g": FixedMachine("a4-highgpu", "NVIDIA_B200", 8),
    "a3-ultragpu-8g": FixedMachine("a3-ultragpu", "NVIDIA_H200_141GB", 8),
    "a3-megagpu-8g": FixedMachine("a3-megagpu", "NVIDIA_H100_MEGA_80GB", 8),
    "a3-highgpu-1g": FixedMachine("a3-highgpu", "NVIDIA_H100_80GB", 1),
    "a3-highgpu-2g": FixedMachine("a3-highgpu", "NVIDIA_H100_80GB", 2),
    "a3-highgpu-4g": FixedMachine("a3-highgpu", "NVIDIA_H100_80GB", 4),
    "a3-highgpu-8g": FixedMachine("a3-highgpu", "NVIDIA_H100_80GB", 8),
    "a2-ultragpu-1g": FixedMachine("a2-ultragpu", "NVIDIA_A100_80GB", 1),
    "a2-ultragpu-2g": FixedMachine("a2-ultragpu", "NVIDIA_A100_80GB", 2),
    "a2-ultragpu-4g": FixedMachine("a2-ultragpu", "NVIDIA_A100_80GB", 4),
    "a2-ultragpu-8g": FixedMachine("a2-ultragpu", "NVIDIA_A100_80GB", 8),
    "a2-highgpu-1g": FixedMachine("a2-highgpu", "NVIDIA_TESLA_A100", 1),
    "a2-highgpu-2g": FixedMachine("a2-highgpu", "NVIDIA_TESLA_A100", 2),
    "a2-highgpu-4g": FixedMachine("a2-highgpu", "NVIDIA_TESLA_A100", 4),
    "a2-highgpu-8g": FixedMachine("a2-highgpu", "NVIDIA_TESLA_A100", 8),
    "a2-megagpu-16g": FixedMachine("a2-megagpu", "NVIDIA_TESLA_A100", 16),
    "g2-standard-4": FixedMachine("g2-standard", "NVIDIA_L4", 1),
    "g2-standard-8": FixedMachine("g2-standard", "NVIDIA_L4", 1),
    "g2-standard-12": FixedMachine("g2-standard", "NVIDIA_L4", 1),
    "g2-standard-16": FixedMachine("g2-standard", "NVIDIA_L4", 1),
    "g2-standard-24": FixedMachine("g2-standard", "NVIDIA_L4", 2),
    "g2-standard-32": FixedMachine("g2-standard", "NVIDIA_L4", 1),
    "g2-standard-48": FixedMachine("g2-standard", "NVIDIA_L4", 4),
    "g2-standard-96": FixedMachine("g2-standard", "NVIDIA_L4", 8),
    "g4-standard-48": FixedMachine("g4-standard", "NVIDIA_RTX_PRO_6000", 1),
    "g4-standard-96": FixedMachine("g4-standard", "NVIDIA_RTX_PRO_6000", 2),
    "g4-standard-192": FixedMachine("g4-standard", "NVIDIA_RTX_PRO_6000", 4),
    "g4-standard-384": FixedMachine("g4-standard", "NVIDIA_RTX_PRO_6000", 8),
})
FIXED_ACCELERATOR_SOURCE: Final = SOURCE_CONFIGURE_COMPUTE
FIXED_ACCELERATOR_MODEL_SOURCE: Final = SOURCE_GCE_GPU_MACHINE_TYPES

# Page, "GPUs": "NVIDIA_GB200 + ... + Requires obtaining capacity using shared reservations."
# "NVIDIA_B200 *, NVIDIA_H100_MEGA_80GB *, NVIDIA_H200_141GB * ... * It's recommended that you obtain
# capacity using shared reservations or spot vms."
GPU_RESERVATION_REQUIRED: Final = ("NVIDIA_GB200",)
GPU_RESERVATION_RECOMMENDED: Final = ("NVIDIA_B200", "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB")

# ---------------------------------------------------------------------------------------------------
# N1 machine types and attachable GPUs
# ---------------------------------------------------------------------------------------------------

# Page, "GPUs": "To use GPUs, you must use an A2, N1, or G2 machine type." "You can only use certain
# numbers of GPUs in your configuration. For example, you can use 2 or 4 NVIDIA_TESLA_T4 GPUs on a VM, but
# not 3." "Since each NVIDIA_TESLA_V100 GPU can provide up to 12 virtual CPUs and 76 GB of memory, you must
# use at least 4 GPUs for each n1-standard-32 VM". "A configuration with 4 NVIDIA_TESLA_P100 GPUs only
# provides up to 64 virtual CPUS and up to 208 GB of memory in all regions and zones."
# The table's N1 columns are NVIDIA_TESLA_P4, NVIDIA_TESLA_P100, NVIDIA_TESLA_T4, NVIDIA_TESLA_V100 (in that
# order); there is no K80 column any more.
# The AI Platform Training GPU guide's table says the same numbers in these four columns, and a K80 column besides:
# this is the one table of N1 GPU counts, for both backends (machines.GPU_COUNTS adds the guide's K80 column to it).
N1_GPU_COLUMN_NOTE: Final = (
    "The page's text form of the table drops empty cells. Rows with four values map to P4, P100, T4, V100 in "
    "column order. Rows with three values ('4, 4, 8') are read as P4 4, T4 4, V100 8 with no P100: the page "
    "caps 4 P100 at 64 vCPUs and 208 GB, which these types exceed, while n1-highcpu-64 (64 vCPUs) keeps four "
    "values; the AI Platform Training GPU guide's table (machines.GPU_COUNTS) gives the same cells."
)
# The rows read so (three values): n1-standard-64, n1-standard-96, n1-highmem-64, n1-highmem-96, n1-highcpu-96.

_N1_SMALL: Final = MappingProxyType({
    "NVIDIA_TESLA_P4": (1, 2, 4), "NVIDIA_TESLA_P100": (1, 2, 4),
    "NVIDIA_TESLA_T4": (1, 2, 4), "NVIDIA_TESLA_V100": (1, 2, 4, 8),
})
_N1_16: Final = MappingProxyType({
    "NVIDIA_TESLA_P4": (1, 2, 4), "NVIDIA_TESLA_P100": (1, 2, 4),
    "NVIDIA_TESLA_T4": (1, 2, 4), "NVIDIA_TESLA_V100": (2, 4, 8),
})
_N1_32: Final = MappingProxyType({
    "NVIDIA_TESLA_P4": (2, 4), "NVIDIA_TESLA_P100": (2, 4),
    "NVIDIA_TESLA_T4": (2, 4), "NVIDIA_TESLA_V100": (4, 8),
})
_N1_HIGHCPU_64: Final = MappingProxyType({
    "NVIDIA_TESLA_P4": (4,), "NVIDIA_TESLA_P100": (4,),
    "NVIDIA_TESLA_T4": (4,), "NVIDIA_TESLA_V100": (8,),
})
_N1_LARGE: Final = MappingProxyType({  # columns inferred, see N1_GPU_COLUMN_NOTE
    "NVIDIA_TESLA_P4": (4,), "NVIDIA_TESLA_T4": (4,), "NVIDIA_TESLA_V100": (8,),
})

N1_GPU_COUNTS: Final = MappingProxyType({
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
})
N1_GPU_SOURCE: Final = SOURCE_CONFIGURE_COMPUTE  # and the AI Platform Training GPU guide (machines.GPU_COUNTS)


# ---------------------------------------------------------------------------------------------------
# GPU end of support
# ---------------------------------------------------------------------------------------------------

# Page, "GPUs": "Caution: NVIDIA P100 GPUs reach end of support on September 15, 2026. For more
# information, see NVIDIA P100 end of support." (The page still lists P100 in its tables.)
# No date was found for NVIDIA_TESLA_V100 or any other GPU.
GPU_END_OF_SUPPORT: Final = MappingProxyType({
    # https://cloud.google.com/compute/docs/eol/k80-eol (the page itself not read; see SOURCE_K80_EOL)
    "NVIDIA_TESLA_K80": date(2024, 5, 1),
    # https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/configure-compute
    # (also Compute Engine release notes 2026-09-22: "As of September 15, 2026 ... shut down")
    "NVIDIA_TESLA_P100": date(2026, 9, 15),
    # https://docs.cloud.google.com/compute/docs/release-notes (2026-09-22 entry) -> compute/docs/eol/t4-eos
    "NVIDIA_TESLA_T4": date(2027, 8, 1),
    # https://docs.cloud.google.com/compute/docs/release-notes (2026-09-22 entry) -> compute/docs/eol/p4-eos
    "NVIDIA_TESLA_P4": date(2027, 8, 1),
})
GPU_END_OF_SUPPORT_SOURCE: Final = SOURCE_CONFIGURE_COMPUTE
GPU_END_OF_SUPPORT_SOURCES: Final = MappingProxyType({
    "NVIDIA_TESLA_K80": SOURCE_K80_EOL,
    "NVIDIA_TESLA_P100": SOURCE_CONFIGURE_COMPUTE,
    "NVIDIA_TESLA_T4": SOURCE_GCE_RELEASE_NOTES,
    "NVIDIA_TESLA_P4": SOURCE_GCE_RELEASE_NOTES,
})

# ---------------------------------------------------------------------------------------------------
# Machine types without accelerators
# ---------------------------------------------------------------------------------------------------

# Page, "Machine types": "In your WorkerPoolSpec, you must specify one of the following machine types in
# the machineSpec.machineType field. Each replica in the worker pool runs on a separate VM that has the
# specified machine type." These are the entries without the asterisk ("must be used with certain GPUs or
# TPUs"), in page order. The n1 types also take GPUs (N1_GPU_COUNTS) but may run without them.
CPU_MACHINE_TYPES: Final = (
    "e2-standard-4", "e2-standard-8", "e2-standard-16", "e2-standard-32",
    "e2-highmem-2", "e2-highmem-4", "e2-highmem-8", "e2-highmem-16",
    "e2-highcpu-16", "e2-highcpu-32",
    "n4-standard-2", "n4-standard-4", "n4-standard-8", "n4-standard-16", "n4-standard-32",
    "n4-standard-48", "n4-standard-64", "n4-standard-80",
    "n4-highmem-2", "n4-highmem-4", "n4-highmem-8", "n4-highmem-16", "n4-highmem-32",
    "n4-highmem-48", "n4-highmem-64", "n4-highmem-80",
    "n4-highcpu-2", "n4-highcpu-4", "n4-highcpu-8", "n4-highcpu-16", "n4-highcpu-32",
    "n4-highcpu-48", "n4-highcpu-64", "n4-highcpu-80",
    "n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32", "n2-standard-48",
    "n2-standard-64", "n2-standard-80",
    "n2-highmem-2", "n2-highmem-4", "n2-highmem-8", "n2-highmem-16", "n2-highmem-32",
    "n2-highmem-48", "n2-highmem-64", "n2-highmem-80",
    "n2-highcpu-16", "n2-highcpu-32", "n2-highcpu-48", "n2-highcpu-64", "n2-highcpu-80",
    "n1-standard-4", "n1-standard-8", "n1-standard-16", "n1-standard-32", "n1-standard-64",
    "n1-standard-96",
    "n1-highmem-2", "n1-highmem-4", "n1-highmem-8", "n1-highmem-16", "n1-highmem-32",
    "n1-highmem-64", "n1-highmem-96",
    "n1-highcpu-16", "n1-highcpu-32", "n1-highcpu-64", "n1-highcpu-96",
    "c2-standard-4", "c2-standard-8", "c2-standard-16", "c2-standard-30", "c2-standard-60",
    "m1-ultramem-40", "m1-ultramem-80", "m1-ultramem-160", "m1-megamem-96",
)
CPU_MACHINE_SOURCE: Final = SOURCE_CONFIGURE_COMPUTE

# The page's machine-type list, asterisked entries (accelerator required), in page order. Note that
# ct6e-standard-* and tpu7x-standard-4t are documented in the TPU section but absent from this list.
ACCELERATOR_MACHINE_TYPES_LISTED: Final = (
    "a4x-highgpu-4g", "a4-highgpu-8g", "a3-ultragpu-8g", "a3-megagpu-8g",
    "a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-highgpu-8g",
    "a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g",
    "a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g",
    "ct5lp-hightpu-1t", "ct5lp-hightpu-4t", "ct5lp-hightpu-8t",
    "g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-24",
    "g2-standard-32", "g2-standard-48", "g2-standard-96",
    "g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384",
    "cloud-tpu",
)

# ---------------------------------------------------------------------------------------------------
# TPUs
# ---------------------------------------------------------------------------------------------------

# Page, "TPUs": "When you use a TPU VM in Agent Platform, you must only use a single worker pool for custom
# training, and you must configure this worker pool to use only one replica."
# Every TPU recipe on the page (v2/v3, v5e, v6e, TPU7x) says "Set replicaCount to 1", including multi-VM
# topologies: the v5e example is machineType ct5lp-hightpu-4t, tpuTopology 4x4, replicaCount 1, which the
# table gives as 16 chips on 4 VMs. So replicaCount does NOT count hosts; the topology does.
TPU_REPLICA_COUNT: Final = 1
# Page: "When you use a TPU VM in Agent Platform, you must only use a single worker pool for custom training,
# and you must configure this worker pool to use only one replica." For v5e/v6e/TPU7x: machineSpec.machineType,
# machineSpec.tpuTopology a supported topology for the machine type, replicaCount 1. Chips in the slice = product
# of the topology dimensions; VMs = chips / chips_per_host (ct5lp-hightpu-4t + 4x4 = 16 chips on 4 VMs).

# Page, "TPU v2 and v3": "Set machineSpec.machineType to cloud-tpu. Set machineSpec.acceleratorType to
# TPU_V2. Set machineSpec.acceleratorCount to 8 for single TPU or 32 or multiple of 32 for TPU Pods. Set
# replicaCount to 1." and for TPU_V3: "Set machineSpec.acceleratorCount to 8 for single TPU or 32+ for TPU
# Pods." Only 8 and 32 are stated as numbers; the pod rule is in CLOUD_TPU_POD_COUNT_RULE.
CLOUD_TPU_MACHINE: Final = "cloud-tpu"
CLOUD_TPU_ACCELERATOR_COUNTS: Final = MappingProxyType({
    "TPU_V2": (8, 32),
    "TPU_V3": (8, 32),
})
CLOUD_TPU_SINGLE_COUNT: Final = 8
CLOUD_TPU_POD_COUNT_RULE: Final = MappingProxyType({
    "TPU_V2": "32 or multiple of 32",   # page wording
    "TPU_V3": "32+",                     # page wording; no multiple stated
})

# Page, "TPU v5e": "Set machineSpec.machineType to ct5lp-hightpu-1t, ct5lp-hightpu-4t, or ct5lp-hightpu-8t.
# Set machineSpec.tpuTopology to a supported topology for the machine type." Table "TPU v5e machine types
# and topologies that are supported for custom training"; machine comparison: v5e chips 1 / 4 / 8.
# Page, "TPU v6e": "Set machineSpec.machineType to ct6e." (sic) with a table for ct6e-standard-1t/-4t/-8t;
# comparison: v6e chips 1 / 4 / 8.
# Page, "TPU 7x": "Set machineSpec.machineType to tpu7x-standard-4t." "All topologies use the
# tpu7x-standard-4t machine type." (2x2x1 = 4 chips on 1 VM.)
# accelerator: no page sets acceleratorType for these machine types (the examples omit it). ct5lp is
# paired with TPU_V5_LITEPOD only by the enum's description "TPU v5"; the enum has no v6e or TPU7x value,
# so those carry "". TPU_V4_POD is in the enum but no custom-training page documents it.
TPU_HOSTS: Final = MappingProxyType({
    "ct5lp-hightpu-1t": TpuHost("TPU_V5_LITEPOD", 1, ("1x1",)),
    "ct5lp-hightpu-4t": TpuHost("TPU_V5_LITEPOD", 4, ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
    "ct5lp-hightpu-8t": TpuHost("TPU_V5_LITEPOD", 8, ("2x4",)),
    "ct6e-standard-1t": TpuHost("", 1, ("1x1",)),
    "ct6e-standard-4t": TpuHost("", 4, ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
    "ct6e-standard-8t": TpuHost("", 8, ("2x4",)),
    "tpu7x-standard-4t": TpuHost(
        "", 4, ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16"),
    ),
})
TPU_SOURCE: Final = SOURCE_CONFIGURE_COMPUTE
#: The TPU generations the enum has no acceleratorType value for, as the page names them ("TPU v6e", "TPU 7x"), and the
#: machine types that run them (TPU_HOSTS with accelerator ""): a pool asks for them by machine type and tpuTopology.
TPU_NAMED_BY_MACHINE: Final = MappingProxyType({
    generation: tuple(m for m, host in TPU_HOSTS.items() if not host.accelerator and m.startswith(prefix))
    for generation, prefix in (("v6e", "ct6e-"), ("7x", "tpu7x-"))
})

# (machine type, tpuTopology) -> (number of TPU chips, number of VMs), exactly as the page's tables give
# them ("Number of TPU chips", "Number of VMs").
TPU_SLICES: Final = MappingProxyType({
    ("ct5lp-hightpu-1t", "1x1"): (1, 1),
    ("ct5lp-hightpu-4t", "2x2"): (4, 1),
    ("ct5lp-hightpu-8t", "2x4"): (8, 1),
    ("ct5lp-hightpu-4t", "2x4"): (8, 2),
    ("ct5lp-hightpu-4t", "4x4"): (16, 4),
    ("ct5lp-hightpu-4t", "4x8"): (32, 8),
    ("ct5lp-hightpu-4t", "8x8"): (64, 16),
    ("ct5lp-hightpu-4t", "8x16"): (128, 32),
    ("ct5lp-hightpu-4t", "16x16"): (256, 64),
    ("ct6e-standard-1t", "1x1"): (1, 1),
    ("ct6e-standard-8t", "2x4"): (8, 1),
    ("ct6e-standard-4t", "2x2"): (4, 1),
    ("ct6e-standard-4t", "2x4"): (8, 2),
    ("ct6e-standard-4t", "4x4"): (16, 4),
    ("ct6e-standard-4t", "4x8"): (32, 8),
    ("ct6e-standard-4t", "8x8"): (64, 16),
    ("ct6e-standard-4t", "8x16"): (128, 32),
    ("ct6e-standard-4t", "16x16"): (256, 64),
    ("tpu7x-standard-4t", "2x2x1"): (4, 1),
    ("tpu7x-standard-4t", "2x2x2"): (8, 2),
    ("tpu7x-standard-4t", "2x2x4"): (16, 4),
    ("tpu7x-standard-4t", "2x4x4"): (32, 8),
    ("tpu7x-standard-4t", "4x4x4"): (64, 16),
    ("tpu7x-standard-4t", "4x4x8"): (128, 32),
    ("tpu7x-standard-4t", "4x8x8"): (256, 64),
    ("tpu7x-standard-4t", "8x8x8"): (512, 128),
    ("tpu7x-standard-4t", "8x8x16"): (1024, 256),
})

# Framework minimums the page states per TPU generation ("TPU v5e requires JAX 0.4.6+, TensorFlow 2.15+,
# or PyTorch 2.1+"; "TPU v6e requires Python 3.10+, JAX 0.4.37+, PyTorch 2.1+ using PJRT as the default
# runtime, or TensorFlow using only the tf-nightly runtime version 2.18+"; "TPU7x requires Python 3.12+").
# The "Training with TPU accelerators" page instead says "Starting with TPU v6e, TensorFlow is no longer
# supported." and "Prebuilt containers for TPU v5e are not available." (SOURCE_TRAINING_WITH_TPU). No rule
# judges a trainer's framework: these are not a table.

# ---------------------------------------------------------------------------------------------------
# Accelerator names not offered for custom training
# ---------------------------------------------------------------------------------------------------

#: MachineSpec.acceleratorType's zero value (SOURCE_DISCOVERY_MACHINESPEC: "Unspecified accelerator type, which means
#: no accelerator"), what proto3 makes of the field left unset: the translation reads a pool naming it as one without
#: accelerators, as Vertex AI does (translate.pools).
NO_ACCELERATOR: Final = "ACCELERATOR_TYPE_UNSPECIFIED"

# The MachineSpec.acceleratorType enum values (SOURCE_DISCOVERY_MACHINESPEC) that no table above uses, with
# why. Every other enum value is in FIXED_ACCELERATOR_MACHINES, N1_GPU_COUNTS, CLOUD_TPU_ACCELERATOR_COUNTS,
# TPU_HOSTS or GPU_END_OF_SUPPORT (K80: in the enum, marked deprecated, refused by its end-of-support date).
NOT_OFFERED_ACCELERATORS: Final = MappingProxyType({
    "ACCELERATOR_TYPE_UNSPECIFIED": (
        "the enum's zero value, 'Unspecified accelerator type, which means no accelerator': a pool that names it is "
        "read as one without accelerators (NO_ACCELERATOR)"
    ),
    "TPU_V4_POD": (
        "in the enum ('TPU v4.') but documented by no custom-training page: configure-compute names TPU v2, "
        "v3 (cloud-tpu), v5e, v6e and 7x only, and the locations page lists no TPU v4 in any region"
    ),
})
