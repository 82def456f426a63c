"""Vertex AI's capacity as the emulator plays it: quota metrics and what a CustomJob counts against them, the 429
of a create over quota, a stockout's failure, a Spot preemption and a replica's non-zero exit. Data and pure
functions (the state keeps the limits and stockouts; `vertex.create` and the clock apply them).

The emulator's own transcription, kept apart from the client's catalog (gcp_training_jobs/jobspec/catalog/quotas.py),
which tests/test_quotas_tables.py holds it against. Sources, read 2026-11-24:
- the metric of each accelerator: GoogleCloudPlatform/vertex-ai-samples community-content/vertex_model_garden/
  model_oss/notebook_util/common_util.py @ 1ab9e4b6 (training_accelerator_map); H100 Mega: the same repository's
  a3mega llama-3-8b-nemo-pretraining/README.md @ 66ce2fa5; TPU v2: google-deepmind/xmanager#29 (a 429 naming
  custom_model_training_tpu_v2 for cloud-tpu TPU_V2 x 8);
- CPUs: "Custom model training CPUs for N1/E2 machine types per region", in vCPU units ("8 highmem-16 CPUs ... 8 *
  16 = 128 CPU units"), and the 429's shape ({'code': 429, 'message': 'The following quota metrics exceed quota
  limits: aiplatform.googleapis.com/custom_model_training_cpus,aiplatform.googleapis.com/custom_model_training_
  nvidia_v100_gpus,...', 'status': 'RESOURCE_EXHAUSTED'}): the Neural Architecture Search setup page
  (docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/neural-architecture-search/
  environment-setup); one metric alone: GoogleCloudPlatform/stable-diffusion-on-gcp#12;
- Spot and FLEX_START count against the preemptible twins (custom_model_training_preemptible_...): the Dynamic
  Workload Scheduler page ("Quota") and the a3mega README;
- a stockout: "Resources are insufficient in region: us-central1", after Vertex tried every zone of the region
  (openreview/openreview-expertise#401), a failure with google.rpc.Code RESOURCE_EXHAUSTED (8), before the job ran;
- a replica's non-zero exit: "The replica workerpool1-1 exited with a non-zero status of 1. Termination reason:
  Error." with code 3 (GoogleCloudPlatform/vertex-ai-samples#1504);
- a Spot preemption: no public source read quotes Vertex's message for a preempted training replica; the emulator's
  words are its own (PREEMPTED), with code 14 UNAVAILABLE, and the client does not depend on them.
- a pool that consumes a named reservation (`machineSpec.reservationAffinity.reservationAffinityType`
  SPECIFIC_RESERVATION) runs on the machines the reservation already holds, and only there: the aiplatform v1
  discovery document's ReservationAffinity enum, SPECIFIC_RESERVATION "Consume from a specific reservation",
  ANY_RESERVATION "Consume any reservation available, falling back to on-demand"; such a pool holds none of the
  custom training quotas (an ANY_RESERVATION pool may land on demand and is counted);
TPU VM slices written without an acceleratorType (ct5lp-hightpu-*, ct6e-*) are not counted here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

SERVICE: Final = "aiplatform.googleapis.com"

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
CPU_METRIC: Final = "custom_model_training_cpus"
CPU_MACHINE: Final = re.compile(r"(?:n1|e2)-(?:standard|highmem|highcpu)-(?P<vcpus>\d+)")
#: The strategies that count against the preemptible twins (a stored job keeps its enums as names).
PREEMPTIBLE: Final = frozenset({"SPOT", "FLEX_START"})
#: The reservation affinity whose pools run only on the reservation's machines (no custom training quota).
RESERVED_ONLY: Final = "SPECIFIC_RESERVATION"

QUOTA_MESSAGE: Final = "The following quota metrics exceed quota limits: "
STOCKOUT_MESSAGE: Final = "Resources are insufficient in region: {region}"
STOCKOUT_CODE: Final = 8
USER_EXIT_MESSAGE: Final = "The replica {replica} exited with a non-zero status of {status}. Termination reason: Error."
USER_EXIT_CODE: Final = 3
PREEMPTED: Final = "The replica {replica} was preempted: Compute Engine reclaimed its Spot VM (emulator's wording)."
PREEMPTED_CODE: Final = 14


def full_name(metric: str) -> str:
    return metric if "/" in metric else f"{SERVICE}/{metric}"


def preemptible(metric: str) -> str:
    head = "custom_model_training_"
    if metric.startswith(head + "preemptible_") or not metric.startswith(head):
        return metric
    return head + "preemptible_" + metric[len(head):]


def _pools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = body.get("jobSpec")
    pools = spec.get("workerPoolSpecs") if isinstance(spec, Mapping) else None
    return [p for p in pools or [] if isinstance(p, Mapping)]


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def machine_types(body: Mapping[str, Any]) -> set[str]:
    """The machine types of a CustomJob's pools, or of a PersistentResource's (what a stockout stops); none for a job
    on a persistent resource (its machines are already there)."""
    if on_persistent_resource(body):
        return set()
    pools = [p for p in body.get("resourcePools") or [] if isinstance(p, Mapping)] or _pools(body)
    return {str((p.get("machineSpec") or {}).get("machineType")) for p in pools
            if isinstance(p.get("machineSpec"), Mapping) and (p.get("machineSpec") or {}).get("machineType")}


def is_spot(body: Mapping[str, Any]) -> bool:
    spec = body.get("jobSpec")
    scheduling = spec.get("scheduling") if isinstance(spec, Mapping) else None
    strategy = scheduling.get("strategy") if isinstance(scheduling, Mapping) else None
    return strategy == "SPOT"


def on_persistent_resource(body: Mapping[str, Any]) -> bool:
    """Whether a CustomJob runs on a persistent resource (whose machines it uses: it holds none of its own)."""
    spec = body.get("jobSpec")
    return isinstance(spec, Mapping) and bool(spec.get("persistentResourceId"))


def needs(body: Mapping[str, Any]) -> dict[str, int]:
    """Metric (full name) -> units a CustomJob holds while it lives: each pool's accelerators, and the vCPUs of its
    N1 / E2 machines, times its replicas; the preemptible twins on SPOT and FLEX_START. None on a persistent
    resource (the resource holds the machines: `resource_needs`), none for a pool on a named reservation (its
    machines are the reservation's: RESERVED_ONLY)."""
    if on_persistent_resource(body):
        return {}
    spec = body.get("jobSpec")
    scheduling = spec.get("scheduling") if isinstance(spec, Mapping) else None
    strategy = scheduling.get("strategy") if isinstance(scheduling, Mapping) else None
    return _count([(p, max(1, _int(p.get("replicaCount"), 1))) for p in _pools(body) if not _reserved_only(p)],
                  strategy in PREEMPTIBLE)


def _reserved_only(pool: Mapping[str, Any]) -> bool:
    """Whether a pool runs only on a named reservation's machines (SPECIFIC_RESERVATION)."""
    machine = pool.get("machineSpec")
    affinity = machine.get("reservationAffinity") if isinstance(machine, Mapping) else None
    return isinstance(affinity, Mapping) and affinity.get("reservationAffinityType") == RESERVED_ONLY


def resource_needs(body: Mapping[str, Any]) -> dict[str, int]:
    """Metric (full name) -> units a PersistentResource holds while it exists: each resource pool's machines, its
    replica count or, under autoscaling, its maxReplicaCount (as many as it may grow to)."""
    pools = [p for p in body.get("resourcePools") or [] if isinstance(p, Mapping)]
    counted = []
    for pool in pools:
        scaling = pool.get("autoscalingSpec")
        top = _int(scaling.get("maxReplicaCount")) if isinstance(scaling, Mapping) else 0
        counted.append((pool, max(top, _int(pool.get("replicaCount"), 1), 1)))
    return _count(counted, twin=False)


def _count(pools: list[tuple[Mapping[str, Any], int]], twin: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for pool, replicas in pools:
        machine = pool.get("machineSpec")
        if not isinstance(machine, Mapping):
            continue
        metric = ACCELERATOR_METRICS.get(str(machine.get("acceleratorType")))
        counted = []
        if metric is not None:
            counted.append((metric, _int(machine.get("acceleratorCount")) * replicas))
        cpu = CPU_MACHINE.fullmatch(str(machine.get("machineType") or ""))
        if cpu is not None:
            counted.append((CPU_METRIC, int(cpu.group("vcpus")) * replicas))
        for name, units in counted:
            key = full_name(preemptible(name) if twin else name)
            out[key] = out.get(key, 0) + units
    return out


def quota_message(metrics: list[str]) -> str:
    """Vertex's 429 message for the metrics over their limits (full names, joined by ",")."""
    return QUOTA_MESSAGE + ",".join(full_name(m) for m in metrics)
