"""Vertex AI's rules, each with a failing example, in both vocabularies: a CustomJobSpec (as `gcloud ai
custom-jobs create --config FILE --region R` reads it) and a trainingInput judged for backend vertex. Problems
name the path the user wrote; allowed lists are cut to what is relevant."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.load import load_custom_job, load_job
from tests.helpers import container_pool, custom_job_spec, gpu_job

TODAY = date(2026, 11, 22)


def problems(data: dict[str, Any], region: str | None = "us-central1", today: date = TODAY) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_custom_job(data, region=region, today=today)
    return [str(p) for p in caught.value.problems]


def one(data: dict[str, Any], **kwargs: Any) -> str:
    found = problems(data, **kwargs)
    assert len(found) == 1, found
    return found[0]


def ok(data: dict[str, Any], region: str = "us-central1", today: date = TODAY) -> None:
    load_custom_job(data, region=region, today=today)


def machine(machine_type: str, accelerator: str | None = None, count: int | None = None, **more: Any) -> dict:
    spec: dict[str, Any] = {"machineType": machine_type, **more}
    if accelerator is not None:
        spec["acceleratorType"] = accelerator
    if count is not None:
        spec["acceleratorCount"] = count
    return spec


# --- Valid current hardware ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("pool", "region"), [
    (machine("a3-highgpu-8g", "NVIDIA_H100_80GB", 8), "us-central1"),
    (machine("a3-highgpu-8g"), "us-east5"),  # the type implies its 8 H100
    (machine("a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB", 8), "europe-west4"),
    (machine("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8), "us-east4"),
    (machine("a4-highgpu-8g", "NVIDIA_B200", 8), "us-central1"),
    (machine("a2-ultragpu-1g", "NVIDIA_A100_80GB", 1), "us-central1"),
    (machine("a2-highgpu-2g", "NVIDIA_TESLA_A100", 2), "europe-west4"),
    (machine("g2-standard-24", "NVIDIA_L4", 2), "us-central1"),
    (machine("g4-standard-96", "NVIDIA_RTX_PRO_6000", 2), "us-east4"),
    (machine("n1-standard-8", "NVIDIA_TESLA_T4", 2), "us-central1"),
    (machine("n1-standard-32", "NVIDIA_TESLA_V100", 4), "us-west1"),
    (machine("n2-standard-8"), "us-east5"),  # CPU only, in a region the AI Platform Training guides did not know
    (machine("cloud-tpu", "TPU_V3", 8), "europe-west4"),
    (machine("cloud-tpu", "TPU_V2", 32), "us-central1"),
    (machine("ct5lp-hightpu-4t", tpuTopology="4x4"), "us-central1"),  # Google's own example: 16 chips, 4 VMs
    (machine("ct5lp-hightpu-1t", "TPU_V5_LITEPOD", 1, tpuTopology="1x1"), "us-west1"),  # type and count together
    (machine("ct6e-standard-4t", tpuTopology="8x8"), "us-east5"),
    (machine("tpu7x-standard-4t", tpuTopology="2x2x1"), "us-central1"),
])
def test_current_hardware_is_accepted(pool: dict[str, Any], region: str) -> None:
    ok(custom_job_spec(container_pool(pool)), region=region)


# --- Machine types and their accelerators --------------------------------------------------------------------


def test_fixed_count_family_needs_its_count() -> None:
    assert one(custom_job_spec(container_pool(machine("a3-highgpu-8g", "NVIDIA_H100_80GB", 4)))) == (
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 4 NVIDIA_H100_80GB on a3-highgpu-8g, which comes with "
        "exactly 8; allowed: 8; a3-highgpu-4g comes with 4")


def test_no_h100_on_n1() -> None:
    text = one(custom_job_spec(container_pool(machine("n1-standard-8", "NVIDIA_H100_80GB", 8))))
    assert text.startswith("workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_H100_80GB on n1-standard-8 is "
                           "not offered; allowed on n1-standard-8: NVIDIA_TESLA_P4, NVIDIA_TESLA_T4, "
                           "NVIDIA_TESLA_V100")  # P100 ended on 2026-09-15: never offered after it
    assert "(NVIDIA_H100_80GB comes with a3-highgpu-1g, a3-highgpu-2g, a3-highgpu-4g, a3-highgpu-8g)" in text


def test_no_l4_on_a2() -> None:
    text = one(custom_job_spec(container_pool(machine("a2-highgpu-1g", "NVIDIA_L4", 1))))
    assert text.startswith("workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_L4 on a2-highgpu-1g: the "
                           "a2-highgpu family comes with NVIDIA_TESLA_A100 only; allowed: NVIDIA_TESLA_A100")
    assert "NVIDIA_L4 comes with g2-standard-4" in text


def test_n1_counts_and_cpu_types() -> None:
    assert one(custom_job_spec(container_pool(machine("n1-standard-4", "NVIDIA_TESLA_T4", 3)))) == (
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 3 NVIDIA_TESLA_T4 on n1-standard-4; allowed: 1, 2, 4")
    assert one(custom_job_spec(container_pool(machine("n1-standard-4", "NVIDIA_TESLA_T4")))).startswith(
        "workerPoolSpecs[0].machineSpec.acceleratorCount: required with acceleratorType NVIDIA_TESLA_T4")
    assert "n2-standard-8 takes no accelerators" in one(
        custom_job_spec(container_pool(machine("n2-standard-8", "NVIDIA_L4", 1))))


def test_unknown_machine_type_lists_its_family_only() -> None:
    text = one(custom_job_spec(container_pool(machine("a3-highgpu-3g"))))
    assert text == ("workerPoolSpecs[0].machineSpec.machineType: 'a3-highgpu-3g' is not a machine type of Vertex AI "
                    "training (did you mean a3-highgpu-8g?); allowed: a3-highgpu-1g, a3-highgpu-2g, a3-highgpu-4g, "
                    "a3-highgpu-8g")
    for wrong in ("zz-standard-8", "n2-standard-7", "e9"):
        text = one(custom_job_spec(container_pool(machine(wrong))))
        assert len(text.split("allowed: ")[1].split(", ")) < 20, text


def test_unknown_and_not_offered_accelerators() -> None:
    assert "(did you mean NVIDIA_TESLA_T4?)" in one(
        custom_job_spec(container_pool(machine("n1-standard-8", "NVIDIA_TESLA_T5", 1))))
    assert "TPU_V4_POD is not offered for custom training" in one(
        custom_job_spec(container_pool(machine("cloud-tpu", "TPU_V4_POD", 8))))


def allowed_of(text: str, after: str = "allowed") -> list[str]:
    """The values of an `allowed...:` list, up to the next "; " (or " (" of a hint after it)."""
    listed = text.split(f"{after}: ", 1)[1].split("; ")[0].split(" (")[0]
    return listed.split(", ")


@pytest.mark.parametrize("accelerator", ["NVIDIA_TESLA_T5", "TPU_V4_POD"])  # unknown; in the enum, not offered
def test_an_unknown_accelerator_is_offered_only_accelerators_in_support(accelerator: str) -> None:
    """The allowed list of a wrong acceleratorType: accelerator types only (no machine type) and none past its end of
    support on the day judged (P100 ended on 2026-09-15; K80 is not one Vertex AI attaches at all)."""
    data = custom_job_spec(container_pool(machine("n1-standard-8", accelerator, 1)))
    before = allowed_of(one(data, today=date(2026, 9, 14)), "allowed on n1-standard-8")
    after = allowed_of(one(data, today=date(2026, 9, 15)), "allowed on n1-standard-8")
    assert before == ["NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100"]
    assert after == ["NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100"]
    # a trainingInput judged for Vertex AI: the same rule on its translation
    legacy = gpu_job("n1-standard-8", accelerator, 1)
    with pytest.raises(SpecError) as caught:
        load_job(legacy, backend="vertex", today=TODAY)
    (problem,) = [p for p in caught.value.problems if p.path.endswith("acceleratorConfig.type")]
    assert allowed_of(problem.message, "allowed on n1-standard-8") == after
    # judged as history (AI Platform Training), a K80 stays valid: only Vertex AI's lists leave it out
    load_job(gpu_job("n1-standard-8", "NVIDIA_TESLA_K80", 1), today=TODAY)


def test_cloud_tpu_cores() -> None:
    assert one(custom_job_spec(container_pool(machine("cloud-tpu", "TPU_V2", 16)))) == (
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 16 TPU_V2 cores on cloud-tpu; allowed: 8 (one TPU) or "
        "32 or multiple of 32 (a TPU Pod)")
    assert "allowed: TPU_V2, TPU_V3" in one(custom_job_spec(container_pool(machine("cloud-tpu", "NVIDIA_L4", 8))))


# --- End of support ------------------------------------------------------------------------------------------


def test_gpu_past_its_end_of_support_is_refused_with_the_date() -> None:
    p100 = custom_job_spec(container_pool(machine("n1-standard-8", "NVIDIA_TESLA_P100", 1)))
    ok(p100, today=date(2026, 9, 14))
    text = one(p100, today=date(2026, 9, 15))
    assert text.startswith("workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_TESLA_P100 is not offered by "
                           "Vertex AI since its end of support on 2026-09-15")
    assert "allowed on n1-standard-8: NVIDIA_TESLA_P4, NVIDIA_TESLA_T4, NVIDIA_TESLA_V100" in text
    assert "instead: n1-standard-8 with 1 NVIDIA_TESLA_T4" in text
    k80 = one(custom_job_spec(container_pool(machine("n1-standard-4", "NVIDIA_TESLA_K80", 1))))
    assert "NVIDIA_TESLA_K80 is not offered by Vertex AI since its end of support on 2024-05-01" in k80
    t4 = custom_job_spec(container_pool(machine("n1-standard-4", "NVIDIA_TESLA_T4", 1)))
    ok(t4)
    assert "end of support on 2027-08-01" in one(t4, today=date(2027, 8, 1))


# --- TPU topology --------------------------------------------------------------------------------------------


def test_tpu_topology_shape_host_and_replicas() -> None:
    def tpu(machine_type: str, topology: str | None, replicas: int = 1, **pool: Any) -> dict[str, Any]:
        extra = {"tpuTopology": topology} if topology else {}
        return custom_job_spec(container_pool(machine(machine_type, **extra), replicaCount=replicas, **pool))

    assert one(tpu("ct5lp-hightpu-4t", "4x4", replicas=4)) == (
        "workerPoolSpecs[0].replicaCount: 4 with ct5lp-hightpu-4t 4x4; allowed: 1 (the topology sets the VMs: 4x4 "
        "is 16 chips on 4 VM(s) of 4 chips, with replicaCount 1)")
    assert one(tpu("ct5lp-hightpu-1t", "2x2")) == (
        "workerPoolSpecs[0].machineSpec.tpuTopology: '2x2' is not a topology of ct5lp-hightpu-1t; allowed: 1x1 "
        "(2x2 is a topology of ct5lp-hightpu-4t, ct6e-standard-4t)")
    assert one(tpu("ct6e-standard-8t", None)) == (
        "workerPoolSpecs[0].machineSpec.tpuTopology: required with ct6e-standard-8t; allowed: 2x4")
    assert one(tpu("n1-standard-8", "2x2")).startswith(
        "workerPoolSpecs[0].machineSpec.tpuTopology: '2x2' is set but n1-standard-8 is not a TPU VM host")
    assert one(tpu("tpu7x-standard-4t", "4x4")).startswith(
        "workerPoolSpecs[0].machineSpec.tpuTopology: '4x4' is not a topology of tpu7x-standard-4t; allowed: 2x2x1")


def test_a_tpu_vm_is_the_only_pool() -> None:
    data = custom_job_spec(container_pool(machine("ct5lp-hightpu-4t", tpuTopology="2x2")),
                           container_pool(machine("n1-standard-8"), replicaCount=2))
    assert one(data).startswith("workerPoolSpecs[0]: ct5lp-hightpu-4t is a TPU VM: a job using one has this single "
                                "worker pool")


# --- Regions -------------------------------------------------------------------------------------------------


def test_accelerator_offered_in_the_region() -> None:
    text = one(custom_job_spec(container_pool(machine("a3-highgpu-8g"))), region="us-west2")
    assert text.startswith("workerPoolSpecs[0].machineSpec.machineType: NVIDIA_H100_80GB is not offered for training "
                           "in us-west2; allowed in us-west2: NVIDIA_B200, NVIDIA_TESLA_P4, NVIDIA_TESLA_T4; regions "
                           "offering NVIDIA_H100_80GB: ")
    assert "(14 in all)" in text
    l4 = one(custom_job_spec(container_pool(machine("g2-standard-8", "NVIDIA_L4", 1))), region="us-west4")
    assert "(the locations page lists it there, but not for training)" in l4
    v6e = one(custom_job_spec(container_pool(machine("ct6e-standard-4t", tpuTopology="2x2"))), region="us-west1")
    assert v6e.startswith("workerPoolSpecs[0].machineSpec.machineType: TPU v6e (ct6e-standard-4t) is not offered")


def test_a_tpu_pod_runs_only_where_the_locations_page_offers_its_pod() -> None:
    """TPU v2 and v3 Pods (cloud-tpu past one TPU's 8 cores) run in fewer regions than their single TPUs: a Pod
    elsewhere is refused by the region rule, naming the region's single TPU where it has one and the Pod's regions;
    its fallback is judged alike."""
    def tpu(kind: str, cores: int) -> dict[str, Any]:
        return custom_job_spec(container_pool(machine("cloud-tpu", kind, cores)))

    ok(tpu("TPU_V2", 32), region="us-central1")
    ok(tpu("TPU_V2", 64), region="europe-west4")
    ok(tpu("TPU_V3", 128), region="europe-west4")
    ok(tpu("TPU_V3", 8), region="us-central1")  # the single TPU v3 runs there
    ok(tpu("TPU_V2", 8), region="asia-east1")
    assert one(tpu("TPU_V3", 32), region="us-central1") == (
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 32 TPU_V3 cores is a TPU v3 Pod, which Vertex AI does not "
        "offer for training in us-central1; allowed: 8 cores (one TPU v3) in us-central1, or a TPU v3 Pod in "
        "europe-west4")
    assert one(tpu("TPU_V2", 64), region="asia-east1") == (
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 64 TPU_V2 cores is a TPU v2 Pod, which Vertex AI does not "
        "offer for training in asia-east1; allowed: 8 cores (one TPU v2) in asia-east1, or a TPU v2 Pod in "
        "europe-west4, us-central1")
    assert one(tpu("TPU_V3", 32), region="us-east1").endswith(  # no TPU v3 at all there: the Pod's regions only
        "is a TPU v3 Pod, which Vertex AI does not offer for training in us-east1; allowed: a TPU v3 Pod in "
        "europe-west4")
    legacy = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-4", "workerType": "cloud_tpu",
                                "workerCount": 1, "region": "us-central1", "runtimeVersion": "2.11",
                                "pythonVersion": "3.7", "packageUris": ["gs://b/t.tar.gz"],
                                "pythonModule": "trainer.task",
                                "workerConfig": {"acceleratorConfig": {"type": "TPU_V3", "count": 32}}}}
    with pytest.raises(SpecError) as caught:  # a trainingInput judged for Vertex AI: the same rule on its translation
        load_job(legacy, backend="vertex", today=TODAY)
    assert any("is a TPU v3 Pod, which Vertex AI does not offer for training in us-central1" in str(p)
               for p in caught.value.problems), caught.value.problems


def test_a_region_offers_only_accelerators_in_support() -> None:
    """The accelerators a region offers, listed when it lacks the job's: none past its end of support on the day
    judged (us-west1 lists P100, which ended on 2026-09-15)."""
    data = custom_job_spec(container_pool(machine("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)))
    before = allowed_of(one(data, region="us-west1", today=date(2026, 9, 14)), "allowed in us-west1")
    after = allowed_of(one(data, region="us-west1", today=date(2026, 9, 15)), "allowed in us-west1")
    assert "NVIDIA_TESLA_P100" in before
    assert after == [a for a in before if a != "NVIDIA_TESLA_P100"]
    assert all(a.isupper() for a in after), after  # accelerator types, no machine type


def test_unknown_region_lists_its_geography() -> None:
    assert one(custom_job_spec(container_pool(machine("n2-standard-8"))), region="us-moon1") == (
        "region: 'us-moon1' is not a Vertex AI training region; allowed: us-central1, us-east1, us-east4, us-east5, "
        "us-south1, us-west1, us-west2, us-west3, us-west4")


# --- Pools ---------------------------------------------------------------------------------------------------


def test_pool_structure() -> None:
    assert one({"workerPoolSpecs": []}).startswith("workerPoolSpecs: required: at least one worker pool")
    assert one({"scheduling": {"strategy": "SPOT"}}).startswith("workerPoolSpecs: required")
    assert one(custom_job_spec({}, container_pool(machine("n1-standard-4")))).startswith(
        "workerPoolSpecs[0]: the first pool is the primary replica and cannot be empty")
    assert one(custom_job_spec(container_pool(machine("n1-standard-4"), replicaCount=2))) == (
        "workerPoolSpecs[0].replicaCount: 2: the first pool is the primary replica; allowed: 1 (add replicas in a "
        "second pool)")
    no_code = {"machineSpec": machine("n1-standard-4"), "replicaCount": 1}
    assert one(custom_job_spec(no_code)).startswith("workerPoolSpecs[0]: required: each pool runs one of "
                                                    "containerSpec")
    both = {**container_pool(machine("n1-standard-4")),
            "pythonPackageSpec": {"executorImageUri": "x", "packageUris": ["gs://bkt/p.tar.gz"], "pythonModule": "m"}}
    assert any("both are set" in p for p in problems(custom_job_spec(both)))
    zero = custom_job_spec(container_pool(machine("n1-standard-4")), container_pool(machine("n1-standard-4"),
                                                                                       replicaCount=0))
    assert one(zero) == ("workerPoolSpecs[1].replicaCount: 0; allowed: 1 or more, or an empty pool {} to skip "
                         "this one")


def test_empty_placeholder_pools_where_vertex_allows_them() -> None:
    ok(custom_job_spec(container_pool(machine("n1-standard-4")), {}, {},
                       container_pool(machine("n1-standard-4"), replicaCount=3)))


def test_python_package_and_container_fields() -> None:
    pool = {"machineSpec": machine("n1-standard-4"), "replicaCount": 1,
            "pythonPackageSpec": {"packageUris": ["trainer.tar.gz"], "pythonModule": "t.task"}}
    assert problems(custom_job_spec(pool)) == [
        "workerPoolSpecs[0].pythonPackageSpec.executorImageUri: required with pythonPackageSpec",
        "workerPoolSpecs[0].pythonPackageSpec.packageUris[0]: 'trainer.tar.gz' is not a Cloud Storage URI: "
        "it does not start with gs://; "
        "allowed: gs://BUCKET/PATH",
    ]
    env = container_pool(machine("n1-standard-4"))
    env["containerSpec"]["env"] = [{"name": "1BAD", "value": "x"}, {"name": "OK"}]
    assert problems(custom_job_spec(env)) == [
        "workerPoolSpecs[0].containerSpec.env[0].name: '1BAD' is not a C identifier; allowed: letters, digits and _, "
        "not starting with a digit",
        "workerPoolSpecs[0].containerSpec.env[1].value: required",
    ]


# --- Scheduling ----------------------------------------------------------------------------------------------


def test_scheduling_strategy_durations_and_booleans() -> None:
    def job(**scheduling: Any) -> dict[str, Any]:
        return custom_job_spec(container_pool(machine("n1-standard-4")), scheduling=scheduling)

    ok(job(strategy="SPOT", timeout="3600s", restartJobOnWorkerRestart=True, disableRetries=False))
    assert one(job(strategy="SPOTT")) == ("scheduling.strategy: 'SPOTT' is not a scheduling strategy (did you mean "
                                          "SPOT?); allowed: STANDARD, SPOT, FLEX_START")
    assert one(job(strategy="LOW_COST")).startswith("scheduling.strategy: LOW_COST is deprecated (aiplatform.v1.json); "
                                                    "allowed: SPOT (its current name)")
    assert one(job(timeout="2h")).startswith("scheduling.timeout: '2h' is not a duration; allowed: seconds with an s")
    assert one(job(maxWaitDuration="1.5")).startswith("scheduling.maxWaitDuration: '1.5' is not a duration")
    assert one(job(timeout="0s")).startswith("scheduling.timeout: 0s; allowed: more than 0s")
    assert one(job(disableRetries="yes")).startswith("scheduling.disableRetries: 'yes': ")
    assert one(job(restartJobOnWorkerRestart=1)).startswith("scheduling.restartJobOnWorkerRestart: 1: ")


def test_flex_start_needs_documented_gpus_same_machines_and_at_most_7_days() -> None:
    a100 = container_pool(machine("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1))
    ok(custom_job_spec(a100, scheduling={"strategy": "FLEX_START", "maxWaitDuration": "7200s"}))
    text = one(custom_job_spec(container_pool(machine("n1-standard-8", "NVIDIA_TESLA_T4", 1)),
                               scheduling={"strategy": "FLEX_START"}))
    assert text.startswith("workerPoolSpecs[0].machineSpec.acceleratorType: n1-standard-8 + 1 NVIDIA_TESLA_T4 has "
                           "NVIDIA_TESLA_T4, and FLEX_START schedules jobs that request GPUs of NVIDIA_L4, ")
    assert one(custom_job_spec(a100, scheduling={"strategy": "FLEX_START", "timeout": "700000s"})).startswith(
        "scheduling.timeout: 700000s with FLEX_START; allowed: at most 604800s (7 days)")
    mixed = custom_job_spec(a100, container_pool(machine("a2-highgpu-2g", "NVIDIA_TESLA_A100", 2), replicaCount=2),
                            scheduling={"strategy": "FLEX_START"})
    assert "FLEX_START jobs use the same machine configuration in every pool" in one(mixed)


def test_spot_cannot_run_tpu_pods() -> None:
    pod = custom_job_spec(container_pool(machine("cloud-tpu", "TPU_V3", 32)), scheduling={"strategy": "SPOT"})
    assert one(pod, region="europe-west4").startswith(  # where the TPU v3 Pod runs
        "workerPoolSpecs[0].machineSpec.acceleratorCount: 32 cores is a TPU Pod, and Spot VMs "
        "cannot run TPU Pods")


# --- Reservations, persistent resources, disks ---------------------------------------------------------------


def reserved(affinity: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return custom_job_spec(container_pool(machine("a3-highgpu-8g", reservationAffinity=affinity)), **spec)


def test_reservation_affinity() -> None:
    name = {"reservationAffinityType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
            "values": ["projects/p/zones/us-central1-a/reservations/h100s"]}
    ok(reserved(name))
    ok(reserved({"reservationAffinityType": "ANY_RESERVATION"}))
    assert one(reserved({"reservationAffinityType": "SPECIFIC"})) == (
        "workerPoolSpecs[0].machineSpec.reservationAffinity.reservationAffinityType: 'SPECIFIC' (did you mean "
        "SPECIFIC_RESERVATION?); allowed: NO_RESERVATION, ANY_RESERVATION, SPECIFIC_RESERVATION")
    assert "'This should not be used'" in one(reserved({"reservationAffinityType": "TYPE_UNSPECIFIED"}))
    assert problems(reserved({"reservationAffinityType": "SPECIFIC_RESERVATION"})) == [
        "workerPoolSpecs[0].machineSpec.reservationAffinity.key: required with SPECIFIC_RESERVATION; allowed: "
        "compute.googleapis.com/reservation-name",
        "workerPoolSpecs[0].machineSpec.reservationAffinity.values: required with SPECIFIC_RESERVATION; allowed: "
        "the reservation's name, projects/PROJECT/zones/ZONE/reservations/NAME",
    ]
    assert "key and values are set with ANY_RESERVATION" in one(
        reserved({"reservationAffinityType": "ANY_RESERVATION", "key": "k"}))
    elsewhere = {**name, "values": ["projects/p/zones/us-east1-b/reservations/h100s"]}
    assert one(reserved(elsewhere)).endswith("zone us-east1-b is not in the job's region us-central1; allowed: a "
                                             "reservation in a zone of us-central1")
    assert "reservations cannot be consumed by FLEX_START jobs" in one(
        reserved({"reservationAffinityType": "ANY_RESERVATION"}, scheduling={"strategy": "FLEX_START"}))
    assert "jobs on a persistent resource cannot consume reservations" in one(
        reserved({"reservationAffinityType": "ANY_RESERVATION"}, persistentResourceId="my-cluster"))


def test_gb200_capacity_only_from_reservations() -> None:
    gb200 = container_pool(machine("a4x-highgpu-4g", "NVIDIA_GB200", 4))
    assert "NVIDIA_GB200 capacity is obtained only from shared reservations" in one(custom_job_spec(gb200))
    gb200["machineSpec"]["reservationAffinity"] = {"reservationAffinityType": "ANY_RESERVATION"}
    ok(custom_job_spec(gb200))


def test_persistent_resource_id_and_names() -> None:
    base = container_pool(machine("n1-standard-4"))
    assert one(custom_job_spec(base, persistentResourceId="projects/p/locations/l/persistentResources/x")
               ).startswith("persistentResourceId: 'projects/p/locations/l/persistentResources/x'; allowed: the "
                            "persistent resource's id")
    assert problems(custom_job_spec(base, network="default", reservedIpRanges=["r"], serviceAccount="me",
                                    baseOutputDirectory={"outputUriPrefix": "/tmp/out"},
                                    tensorboard="projects/p/locations/europe-west4/tensorboards/1")) == [
        "serviceAccount: 'me'; allowed: a service account email",
        "network: 'default'; allowed: projects/PROJECT_NUMBER/global/networks/NAME",
        "baseOutputDirectory.outputUriPrefix: '/tmp/out' is not a Cloud Storage URI: "
        "it does not start with gs://; allowed: gs://BUCKET/PATH",
        "tensorboard: is in europe-west4, not in the job's region us-central1; allowed: a resource in us-central1",
    ]


def test_disk_types_and_sizes() -> None:
    pool = container_pool(machine("n1-standard-4"), diskSpec={"bootDiskType": "pd-balanced", "bootDiskSizeGb": 50})
    assert problems(custom_job_spec(pool)) == [
        "workerPoolSpecs[0].diskSpec.bootDiskType: 'pd-balanced' (did you mean hyperdisk-balanced?); allowed: "
        "pd-ssd, pd-standard, hyperdisk-balanced",
        "workerPoolSpecs[0].diskSpec.bootDiskSizeGb: 50; allowed: 100 to 64000",
    ]
    ok(custom_job_spec(container_pool(machine("a3-ultragpu-8g"),
                                      diskSpec={"bootDiskType": "hyperdisk-balanced", "bootDiskSizeGb": 2000})),
       region="us-east4")


# --- Vocabulary ----------------------------------------------------------------------------------------------


def test_camel_case_keys_only_with_a_did_you_mean() -> None:
    assert one({"worker_pool_specs": [container_pool(machine("n1-standard-4"))]}).startswith(
        "worker_pool_specs: unknown field 'worker_pool_specs' (did you mean workerPoolSpecs? keys are camelCase)")
    snake = {"workerPoolSpecs": [{"machine_spec": machine("n1-standard-4"), "replicaCount": 1}]}
    assert one(snake).startswith("workerPoolSpecs[0].machine_spec: unknown field 'machine_spec' (did you mean "
                                 "machineSpec? keys are camelCase)")


def test_a_single_mapping_of_pools_is_named_as_written() -> None:
    """gcloud's --config example writes workerPoolSpecs as one mapping."""
    data = {"workerPoolSpecs": container_pool(machine("n1-standard-4", "NVIDIA_TESLA_T4", 3))}
    assert one(data) == ("workerPoolSpecs.machineSpec.acceleratorCount: 3 NVIDIA_TESLA_T4 on n1-standard-4; allowed: "
                         "1, 2, 4")
    assert one({"workerPoolSpecs": {"machineSpec": {"machineType": 4}, "replicaCount": 1}}).startswith(
        "workerPoolSpecs.machineSpec.machineType: 4: ")


def test_a_custom_job_request_body_is_explained() -> None:
    """gcloud's --config reads a CustomJobSpec; a REST request body (displayName + jobSpec) is told so."""
    assert one({"displayName": "x", "jobSpec": {"workerPoolSpecs": []}}).startswith(
        "jobSpec: is a CustomJob request body (other keys: displayName); allowed: a CustomJobSpec")


# --- trainingInput on Vertex AI ------------------------------------------------------------------------------


def test_training_input_with_current_hardware_works_on_vertex_only() -> None:
    data = gpu_job("a3-highgpu-8g", "NVIDIA_H100_80GB", 8, masterConfig={
        "acceleratorConfig": {"type": "NVIDIA_H100_80GB", "count": 8}, "imageUri": "us-docker.pkg.dev/p/r/t:1"})
    for key in ("runtimeVersion", "pythonVersion", "pythonModule", "packageUris"):
        del data["trainingInput"][key]
    job = load_job(data, backend="vertex", today=TODAY)
    assert job.training_input.master_type == "a3-highgpu-8g"
    with pytest.raises(SpecError) as caught:
        load_job(data)  # ai-platform keeps its historic limits
    assert str(caught.value.problems[0]).startswith(
        "trainingInput.masterType: 'a3-highgpu-8g' is a machine type of Vertex AI, not of AI Platform Training")


def test_training_input_paths_on_vertex() -> None:
    data = gpu_job("a3-highgpu-8g", "NVIDIA_H100_80GB", 4, region="us-west2")
    with pytest.raises(SpecError) as caught:
        load_job(data, backend="vertex", today=date(2024, 6, 1))
    assert [str(p).split(":")[0] for p in caught.value.problems] == [
        "trainingInput.masterConfig.acceleratorConfig.count", "trainingInput.masterConfig.acceleratorConfig.type"]
    legacy = gpu_job("n1-standard-4", region="us-central1", masterType="standard_gpu", runtimeVersion="1.15")
    with pytest.raises(SpecError) as caught:
        load_job(legacy, backend="vertex", today=date(2024, 6, 1))
    (problem,) = caught.value.problems
    assert problem.path == "trainingInput.masterType" and "NVIDIA_TESLA_K80 is not offered by Vertex AI" in \
        problem.message


@pytest.mark.parametrize(("pool", "region", "expected"), [
    (machine("a3-highgpu-8g", "NVIDIA_H100_80GB"), "us-east5",
     "workerPoolSpecs[0].machineSpec.acceleratorCount: required with acceleratorType NVIDIA_H100_80GB: Vertex AI "
     "refuses one without the other ('Both accelerator_type and accelerator_count should be specified or none'); "
     "allowed: acceleratorCount 8, or neither field"),
    (machine("g2-standard-8", count=1), "us-central1",
     "workerPoolSpecs[0].machineSpec.acceleratorType: required with acceleratorCount 1: Vertex AI refuses one "
     "without the other ('Both accelerator_type and accelerator_count should be specified or none'); allowed: "
     "acceleratorType NVIDIA_L4, or neither field"),
    (machine("ct5lp-hightpu-4t", "TPU_V5_LITEPOD", tpuTopology="2x2"), "us-central1",
     "workerPoolSpecs[0].machineSpec.acceleratorCount: required with acceleratorType TPU_V5_LITEPOD: Vertex AI "
     "refuses one without the other ('Both accelerator_type and accelerator_count should be specified or none'); "
     "allowed: an acceleratorCount too, or neither field"),
])
def test_an_accelerator_type_and_count_go_together_or_not_at_all(pool: dict[str, Any], region: str,
                                                                  expected: str) -> None:
    """What `validate` passed and Vertex AI (and the emulator) refused at create: both or neither, whatever the
    machine, even one that comes with its GPUs. Neither stays valid."""
    assert one(custom_job_spec(container_pool(pool)), region=region) == expected
    ok(custom_job_spec(container_pool(machine(pool["machineType"], **{k: v for k, v in pool.items()
                                                                       if k == "tpuTopology"}))), region=region)
