"""Vertex AI custom training quotas: which quota metric a pool's accelerators and CPUs count against, per region.
Data only (read 2026-11-24).

- SERVICE: the service every metric belongs to (`aiplatform.googleapis.com/<metric>`).
- ACCELERATOR_METRICS: an accelerator type (MachineSpec.acceleratorType, as the body names it) -> its on-demand
  metric. Counted in the body's unit: GPUs, TPU chips of a TPU VM slice, a Cloud TPU's cores (the samples compare
  `accelerator_count` with the limit as it stands).
- CPU_METRIC / CPU_METRIC_FAMILIES: the vCPUs of N1 and E2 machines count against `custom_model_training_cpus`
  ("Custom model training CPUs for N1/E2 machine types per region"; "If you want 8 highmem-16 CPUs, then make your
  quota request for 8 * 16 = 128 CPU units"). Other families have metrics of their own whose names no source read
  here states: not checked ("unknown"), never guessed.
- PREEMPTIBLE_PREFIX / preemptible(): Spot (`SPOT`) and Dynamic Workload Scheduler (`FLEX_START`) jobs count
  against the preemptible twin of each metric. Derived rule: `custom_model_training_` becomes
  `custom_model_training_preemptible_`. Evidence: H100 (the DWS page: `custom_model_training_nvidia_h100_gpus` ->
  `custom_model_training_preemptible_nvidia_h100_gpus`) and H100 Mega (the A3 Mega recipe names both); the CPUs'
  twin, `custom_model_training_preemptible_cpus`, follows the same rule.
- QUOTA_EXCEEDED_PREFIX: how Vertex AI's create answers a job over quota: HTTP 429 RESOURCE_EXHAUSTED, "The following
  quota metrics exceed quota limits: aiplatform.googleapis.com/<metric>" (several metrics joined by ","), at once.
- REQUEST_MORE: where to ask for more.

Accelerators with no metric here (NVIDIA_H200_141GB, NVIDIA_B200, NVIDIA_GB200, NVIDIA_RTX_PRO_6000, NVIDIA_TESLA_P4,
NVIDIA_TESLA_P100, TPU v6e, TPU7x): no source read names their metric; a job on them is not quota-checked, and says
so.
"""

from __future__ import annotations

import re
from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source
from gcp_training_jobs.jobspec.catalog.vertex_jobspec import PREEMPTIBLE_STRATEGIES
from gcp_training_jobs.jobspec.core.names import VERTEX_SERVICE

_READ: Final = date(2026, 11, 24)

SOURCE_COMMON_UTIL: Final = Source(
    title="Vertex AI Model Garden notebook utilities: get_resource_id (training_accelerator_map) and check_quota",
    url="https://github.com/GoogleCloudPlatform/vertex-ai-samples/blob/1ab9e4b6e3845ab6d58a4d4ce797288af1f6972b/"
        "community-content/vertex_model_garden/model_oss/notebook_util/common_util.py",
    read=_READ,
    repository="GoogleCloudPlatform/vertex-ai-samples",
    commit="1ab9e4b6e3845ab6d58a4d4ce797288af1f6972b",
    note="Google's own map from MachineSpec.acceleratorType to the custom training quota metric (V100, L4, A100, "
         "A100 80GB, H100 80GB, T4, TPU v5e, TPU v3); it reads the limits with `gcloud alpha services quota list`, "
         "quotaBuckets[].dimensions.region and effectiveLimit",
)
SOURCE_A3_MEGA_RECIPE: Final = Source(
    title="Vertex AI Training: Llama 3.1 8B pre-training using Nvidia A3 Mega VMs (H100), 'H100 Mega Quota'",
    url="https://github.com/GoogleCloudPlatform/vertex-ai-samples/blob/66ce2fa5b76e45cd40ac0394da8e7072f7ac36c2/"
        "community-content/vertex-distributed-training/a3mega/llama-3-8b-nemo-pretraining/README.md",
    read=_READ,
    repository="GoogleCloudPlatform/vertex-ai-samples",
    commit="66ce2fa5b76e45cd40ac0394da8e7072f7ac36c2",
    note="`custom_model_training_nvidia_h100_mega_gpus`; with Spot VMs `custom_model_training_preemptible_nvidia_h100_"
         "mega_gpus`",
)
SOURCE_DWS_QUOTA: Final = Source(
    title="Schedule training jobs based on resource availability, 'Quota'",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/schedule-jobs-dws",
    read=_READ,
    note="Whole page read. FLEX_START consumes preemptible quota: "
         "custom_model_training_preemptible_nvidia_h100_gpus instead of "
         "custom_model_training_nvidia_h100_gpus ('preemptible quota is used only in name')",
)
SOURCE_NAS_SETUP: Final = Source(
    title="Neural Architecture Search: Set up your environment, 'Request additional device quota for the project'",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/"
        "neural-architecture-search/environment-setup",
    read=_READ,
    note="Whole page read. The 429 a job over quota gets ({'code': 429, 'message': 'The following quota metrics "
         "exceed quota limits: "
         "aiplatform.googleapis.com/custom_model_training_cpus,aiplatform.googleapis.com/custom_model_training_"
         "nvidia_v100_gpus,...', 'status': 'RESOURCE_EXHAUSTED'}); CPUs 'for N1/E2 machine types per region', in "
         "vCPU units; quotas are per region",
)
SOURCE_QUOTA_429: Final = Source(
    title="Get error \"status\": \"RESOURCE_EXHAUSTED\" (GoogleCloudPlatform/stable-diffusion-on-gcp#12)",
    url="https://github.com/GoogleCloudPlatform/stable-diffusion-on-gcp/issues/12",
    read=_READ,
    note="customJobs.create answered {'code': 429, 'message': 'The following quota metrics exceed quota limits: "
         "aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus', 'status': 'RESOURCE_EXHAUSTED'}",
)
SOURCE_TPU_V2_429: Final = Source(
    title="ResourceExhausted: 429 The following quota metrics exceed quota limits (google-deepmind/xmanager#29)",
    url="https://github.com/google-deepmind/xmanager/issues/29",
    read=_READ,
    note="a cloud-tpu pool with acceleratorType TPU_V2 and acceleratorCount 8 refused for "
         "aiplatform.googleapis.com/custom_model_training_tpu_v2",
)
SOURCES: Final = (SOURCE_COMMON_UTIL, SOURCE_A3_MEGA_RECIPE, SOURCE_DWS_QUOTA, SOURCE_NAS_SETUP, SOURCE_QUOTA_429,
                  SOURCE_TPU_V2_429)

SERVICE: Final = VERTEX_SERVICE

#: acceleratorType -> on-demand metric (SOURCE_COMMON_UTIL, SOURCE_A3_MEGA_RECIPE, SOURCE_TPU_V2_429).
ACCELERATOR_METRICS: Final = MappingProxyType({
    "NVIDIA_TESLA_T4": "custom_model_training_nvidia_t4_gpus",
    "NVIDIA_TESLA_V100": "custom_model_training_nvidia_v100_gpus",
    "NVIDIA_L4": "custom_model_training_nvidia_l4_gpus",
    "NVIDIA_TESLA_A100": "custom_model_training_nvidia_a100_gpus",
    "NVIDIA_A100_80GB": "custom_model_training_nvidia_a100_80gb_gpus",
    "NVIDIA_H100_80GB": "custom_model_training_nvidia_h100_gpus",
    "NVIDIA_H100_MEGA_80GB": "custom_model_training_nvidia_h100_mega_gpus",
    "TPU_V2": "custom_model_training_tpu_v2",
    "TPU_V3": "custom_model_training_tpu_v3",
    "TPU_V5_LITEPOD": "custom_model_training_tpu_v5e",
})
ACCELERATOR_METRICS_SOURCES: Final = (SOURCE_COMMON_UTIL, SOURCE_A3_MEGA_RECIPE, SOURCE_TPU_V2_429)

#: The vCPUs of these machine families count against CPU_METRIC (SOURCE_NAS_SETUP).
CPU_METRIC: Final = "custom_model_training_cpus"
CPU_METRIC_FAMILIES: Final = frozenset({"n1", "e2"})
#: A predefined N1 / E2 machine type and its vCPUs: FAMILY-CLASS-N has N vCPUs (Compute Engine's naming, as the
#: configure-compute page uses it: "n1-highcpu-64 (64 vCPUs)"; the NAS page: "highmem-16 ... 16 CPU units").
#: Shared-core types (e2-micro, e2-small, e2-medium) and custom types do not match: their vCPUs are unknown here.
CPU_MACHINE: Final = re.compile(r"(?P<family>n1|e2)-(?:standard|highmem|highcpu)-(?P<vcpus>\d+)")

#: Spot and FLEX_START (vertex_jobspec.PREEMPTIBLE_STRATEGIES) count against the preemptible twin of each metric
#: (SOURCE_DWS_QUOTA; the rule in the module docstring).

#: A pool that consumes a named reservation runs on machines the reservation already holds, and only there: Vertex's
#: ReservationAffinity types (aiplatform v1 discovery document): SPECIFIC_RESERVATION "Consume from a specific
#: reservation", ANY_RESERVATION "Consume any reservation available, falling back to on-demand". A SPECIFIC pool
#: therefore asks nothing of the custom training (on-demand) quotas; an ANY pool may land on demand and is counted as
#: if it did (its worst placement).
RESERVED_ONLY_AFFINITY: Final = "SPECIFIC_RESERVATION"
METRIC_PREFIX: Final = "custom_model_training_"
PREEMPTIBLE_PREFIX: Final = "custom_model_training_preemptible_"
PREEMPTIBLE_SOURCES: Final = (SOURCE_DWS_QUOTA, SOURCE_A3_MEGA_RECIPE)

#: The start of the message of a create refused for quota (SOURCE_QUOTA_429, SOURCE_NAS_SETUP).
QUOTA_EXCEEDED_PREFIX: Final = "The following quota metrics exceed quota limits:"

#: Where to ask for more: the console's quotas page for the service, and Google's guide (SOURCE_COMMON_UTIL).
QUOTAS_CONSOLE: Final = "https://console.cloud.google.com/iam-admin/quotas?project={project}&service=" + SERVICE
REQUEST_MORE: Final = "https://cloud.google.com/docs/quotas/view-manage#requesting_higher_quota"


def preemptible(metric: str) -> str:
    """The preemptible twin of an on-demand metric (custom_model_training_X -> custom_model_training_preemptible_X)."""
    if metric.startswith(PREEMPTIBLE_PREFIX) or not metric.startswith(METRIC_PREFIX):
        return metric
    return PREEMPTIBLE_PREFIX + metric[len(METRIC_PREFIX):]


def full_name(metric: str) -> str:
    """`aiplatform.googleapis.com/<metric>`, as Service Usage and the 429 name it."""
    return metric if "/" in metric else f"{SERVICE}/{metric}"


def short_name(metric: str) -> str:
    """The metric without its service (`custom_model_training_nvidia_l4_gpus`)."""
    return metric.rsplit("/", 1)[-1]


__all__ = ["ACCELERATOR_METRICS", "CPU_MACHINE", "CPU_METRIC", "CPU_METRIC_FAMILIES", "PREEMPTIBLE_STRATEGIES",
           "QUOTAS_CONSOLE", "QUOTA_EXCEEDED_PREFIX", "REQUEST_MORE", "RESERVED_ONLY_AFFINITY", "SERVICE", "SOURCES",
           "full_name", "preemptible", "short_name"]
