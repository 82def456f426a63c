"""Vertex AI CustomJobSpec vocabulary as Google documents it: scheduling strategies, reservations, boot disks.
Data only.

What is here (read 2026-11-22):

- SCHEDULING_STRATEGIES / DEPRECATED_STRATEGIES: the ``scheduling.strategy`` enum of the discovery document.
- FLEX_START_*: what a Dynamic Workload Scheduler (``FLEX_START``) job must meet.
- SPOT_*: what Spot VMs cannot be used with.
- RESERVATION_*: ``machineSpec.reservationAffinity`` types, the key that targets a reservation by name, the
  form of its values, and what reservations cannot be combined with.
- BOOT_DISK_*: ``diskSpec`` types and sizes.
- DEFAULT_TIMEOUT_SECONDS: the documented default of ``scheduling.timeout``.
"""

from __future__ import annotations

from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source

_READ: Final = date(2026, 11, 22)

SOURCE_DISCOVERY_JOBSPEC: Final = Source(
    title="Agent Platform API discovery document (aiplatform v1): GoogleCloudAiplatformV1CustomJobSpec, "
          "Scheduling, ReservationAffinity, DiskSpec",
    url="https://aiplatform.googleapis.com/$discovery/rest?version=v1",
    read=_READ,
    note=(
        "Revision 20261106, as google-api-python-client ships it in googleapiclient/discovery_cache/documents/"
        "aiplatform.v1.json"
    ),
)

SOURCE_RESERVATIONS: Final = Source(
    title="Use reservations with training",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/use-reservations",
    read=_READ,
    note="Whole page read.",
)

SOURCE_SPOT: Final = Source(
    title="Use Spot VMs with training",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/use-spot-vms",
    read=_READ,
    note="Whole page read.",
)

SOURCE_DWS: Final = Source(
    title="Schedule training jobs based on resource availability",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/schedule-jobs-dws",
    read=_READ,
    note="Whole page read.",
)

SOURCE_BOOT_DISKS: Final = Source(
    title="Configure compute resources for Gemini Enterprise Agent Platform serverless training, "
          "'Boot disk options'",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/configure-compute",
    read=_READ,
    note="Whole page read.",
)

SOURCE_ACCELERATOR_PAIR: Final = Source(
    title="Vertex AI's answer to a CustomJob create with acceleratorType and no acceleratorCount, quoted in "
          "PrefectHQ/prefect-gcp issue 175 (2023-04-24)",
    url="https://github.com/PrefectHQ/prefect-gcp/issues/175",
    read=date(2026, 11, 25),
    note="The discovery document describes MachineSpec.acceleratorType and acceleratorCount apart; the pairing "
         "is Vertex AI's check at create, in its own words: ACCELERATOR_PAIR_RULE",
)

# --- Accelerators ----------------------------------------------------------------------------------

#: A MachineSpec's acceleratorType and acceleratorCount are given together or not at all, whatever the machine (a
#: type that comes with its GPUs, such as a3-highgpu-8g, included). Vertex AI's words (SOURCE_ACCELERATOR_PAIR):
ACCELERATOR_PAIR_RULE: Final = "Both accelerator_type and accelerator_count should be specified or none"

# --- Scheduling ------------------------------------------------------------------------------------

#: Scheduling.strategy enum, in the document's order. enumDescriptions: STRATEGY_UNSPECIFIED "Strategy will
#: default to STANDARD."; ON_DEMAND "Deprecated. Regular on-demand provisioning strategy."; LOW_COST
#: "Deprecated. Low cost by making potential use of spot resources."; STANDARD "Standard provisioning
#: strategy uses regular on-demand resources."; SPOT "Spot provisioning strategy uses spot resources.";
#: FLEX_START "Flex Start strategy uses DWS to queue for resources." Source: SOURCE_DISCOVERY_JOBSPEC.
SCHEDULING_STRATEGIES: Final = ("STRATEGY_UNSPECIFIED", "ON_DEMAND", "LOW_COST", "STANDARD", "SPOT", "FLEX_START")
#: The values the enum marks deprecated (enumDeprecated), with the current value of the same meaning (from
#: their descriptions: "Regular on-demand" is STANDARD's "regular on-demand resources", "spot resources" SPOT's).
DEPRECATED_STRATEGIES: Final = MappingProxyType({"ON_DEMAND": "STANDARD", "LOW_COST": "SPOT"})
#: The values a job should name today.
CURRENT_STRATEGIES: Final = ("STANDARD", "SPOT", "FLEX_START")
#: The strategies that run on Spot (preemptible) or Flex-start (DWS) capacity: they count against the preemptible
#: twin of each quota metric (catalog.quotas, SOURCE_DWS_QUOTA), and the `spotOnly` guardrail allows only them.
PREEMPTIBLE_STRATEGIES: Final = ("SPOT", "FLEX_START")

#: Scheduling.timeout: "Optional. The maximum job running time. The default is 7 days." Source:
#: SOURCE_DISCOVERY_JOBSPEC (GoogleCloudAiplatformV1Scheduling.timeout); the same words in Google's client
#: references, e.g. https://docs.cloud.google.com/ruby/docs/reference/google-cloud-ai_platform-v1/0.27.0/
#: Google-Cloud-AIPlatform-V1-Scheduling ("#timeout ... The maximum job running time. The default is 7 days.",
#: read 2026-11-23).
#: A job without a timeout may run this long: the worst case of its cost (gcp_training_jobs.jobspec.review.cost).
DEFAULT_TIMEOUT_SECONDS: Final = 7 * 24 * 3600

#: Dynamic Workload Scheduler (strategy FLEX_START). Source: SOURCE_DWS, "Requirements": "Your serverless
#: training job requests L4, A100, H100, H200, or B200 GPUs." "Your serverless training job has a maximum
#: `timeout` of 7 days or less." "Your serverless training job uses the same machine configuration for all
#: worker pools." "A100" is read as both A100 models (40GB and 80GB) and "H100" as both H100 models (the
#: page's own example runs a2-highgpu-1g with NVIDIA_TESLA_A100; no model is excluded by name).
FLEX_START_GPUS: Final = (
    "NVIDIA_L4", "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB", "NVIDIA_B200",
)
FLEX_START_MAX_TIMEOUT_SECONDS: Final = 7 * 24 * 3600

#: Spot VMs. Source: SOURCE_SPOT, "Limitations and requirements": "Using Spot VMs with TPU Pods isn't
#: supported." A TPU Pod is a cloud-tpu pool with more than the single device's 8 cores (vertex_machines:
#: "8 for single TPU or 32 or multiple of 32 for TPU Pods").
SPOT_EXCLUDES_TPU_PODS: Final = True

# --- Reservations ----------------------------------------------------------------------------------

#: ReservationAffinity.reservationAffinityType enum (SOURCE_DISCOVERY_JOBSPEC). TYPE_UNSPECIFIED: "Default
#: value. This should not be used." SPECIFIC_RESERVATION: "the reservation must be identified via the `key`
#: and `values` fields."
RESERVATION_AFFINITY_TYPES: Final = ("TYPE_UNSPECIFIED", "NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION")
RESERVATION_AFFINITY_USABLE: Final = ("NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION")
#: Types that consume reserved capacity (NO_RESERVATION "has the same effect as omitting a reservation
#: affinity specification", SOURCE_RESERVATIONS).
RESERVATION_CONSUMING: Final = ("ANY_RESERVATION", "SPECIFIC_RESERVATION")
#: SOURCE_RESERVATIONS request body: "Use the following key and values only if the reservationAffinityType is
#: SPECIFIC_RESERVATION. "key": "compute.googleapis.com/reservation-name", "values":
#: ["projects/PROJECT_ID/zones/ZONE/reservations/RESERVATION_NAME"]"; the discovery document's values: "the
#: resource name of the reservation, reservation block, or reservation sub-block".
RESERVATION_NAME_KEY: Final = "compute.googleapis.com/reservation-name"
RESERVATION_VALUE_PATTERN: Final = (
    r"projects/[^/]+/zones/(?P<zone>[a-z]+-[a-z]+[0-9]+-[a-z])/reservations/[^/]+"
    r"(/reservationBlocks/[^/]+(/reservationSubBlocks/[^/]+)?)?"
)
#: SOURCE_RESERVATIONS, "Limitations and requirements": "Flex Start for Dynamic Workload Scheduler and
#: running training jobs on a persistent resource are both supported except when using Compute Engine
#: reservations with Agent Platform training."
RESERVATION_EXCLUDES_STRATEGIES: Final = ("FLEX_START",)
RESERVATION_EXCLUDES_PERSISTENT_RESOURCE: Final = True

# --- Boot disks ------------------------------------------------------------------------------------

#: SOURCE_BOOT_DISKS: "You can set this field to one of the following: pd-standard ..., pd-ssd ...,
#: hyperdisk-balanced ... The default value is pd-ssd (hyperdisk-balanced is the default for a3-ultragpu-8g
#: and a4-highgpu-8g)." "You can set this field to an integer between 100 and 64,000, inclusive. The default
#: value is 100." The page leaves which machine types take hyperdisk to Compute Engine's list (not read).
BOOT_DISK_TYPES: Final = ("pd-ssd", "pd-standard", "hyperdisk-balanced")
BOOT_DISK_SIZE_GB: Final = (100, 64_000)

#: SOURCE_BOOT_DISKS (the same page, the defaults): the boot disk a pool gets when its diskSpec sets none (a review
#: shows any other as set): pd-ssd of 100 GB, hyperdisk-balanced on the machines listed. A job's pool on a persistent
#: resource matches a resource pool with these filled in (SOURCE_PERSISTENT_RESOURCE); the emulator's own copy
#: (gcp_training_jobs/emulator/vertex_limits.py) is held equal by tests/test_persistent_resources.py.
BOOT_DISK_DEFAULT_TYPE: Final = "pd-ssd"
BOOT_DISK_DEFAULT_HYPERDISK: Final = "hyperdisk-balanced"
BOOT_DISK_DEFAULT_HYPERDISK_MACHINES: Final = ("a3-ultragpu-8g", "a4-highgpu-8g")
BOOT_DISK_DEFAULT_GB: Final = 100

SOURCE_HYPERDISK_ONLY: Final = Source(
    title="Accelerator-optimized machine family (Compute Engine), the A4X, A4 and A3 Ultra limitations",
    url="https://cloud.google.com/compute/docs/accelerator-optimized-machines",
    read=date(2026, 11, 28),
    note="Each of the A4X, A4 and A3 Ultra series' limitations: \"You can't use Persistent Disk (regional or zonal). "
         "You can only use Google Cloud Hyperdisk.\" Of the boot disk types Vertex AI takes (BOOT_DISK_TYPES), "
         "hyperdisk-balanced is the one Hyperdisk.",
)

#: SOURCE_HYPERDISK_ONLY: the machine types of the A4X, A4 and A3 Ultra series Vertex AI runs (catalog.vertex_machines'
#: accelerator-optimized types): they boot only from Hyperdisk, so a pd-ssd or pd-standard boot disk is refused. The
#: emulator's own copy (emulator/vertex_limits.py, HYPERDISK_ONLY_MACHINES) is held equal by
#: tests/test_outside_files.py.
HYPERDISK_ONLY_MACHINES: Final = ("a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g")
HYPERDISK_BOOT_DISK_TYPES: Final = ("hyperdisk-balanced",)

# --- Persistent resources --------------------------------------------------------------------------

SOURCE_PERSISTENT_RESOURCE: Final = Source(
    title="Run training jobs on a persistent resource",
    url="https://cloud.google.com/vertex-ai/docs/training/persistent-resource-train",
    read=date(2026, 11, 26),
    note="A job's worker pools each match a resource pool: the same machineSpec and diskSpec, and a replicaCount "
         "at most the pool's replicaCount (or its autoscaling maxReplicaCount).",
)

SOURCE_PERSISTENT_RESOURCE_OVERVIEW: Final = Source(
    title="Overview of persistent resource",
    url="https://cloud.google.com/vertex-ai/docs/training/persistent-resource-overview",
    read=date(2026, 11, 26),
    note="Persistent resources support all VMs and GPUs that are supported by custom training jobs (no TPU named); "
         "billed for every instance while the resource is running, at least minReplicaCount under autoscaling, "
         "and the jobs on it are not charged separately.",
)


def boot_disk_of(machine_type: str | None, disk_type: str | None, size_gb: int | None) -> tuple[str, int]:
    """A pool's boot disk (type, GB) with Vertex's defaults filled in where its diskSpec leaves them unset."""
    default = (BOOT_DISK_DEFAULT_HYPERDISK if machine_type in BOOT_DISK_DEFAULT_HYPERDISK_MACHINES
               else BOOT_DISK_DEFAULT_TYPE)
    return disk_type or default, size_gb or BOOT_DISK_DEFAULT_GB
