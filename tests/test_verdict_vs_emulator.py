"""One verdict, held to Google's: the project's rules (`validate`: jobspec.load.judge_custom_job) and the emulator's
checks (emulator/vertex_checks.py, Vertex AI's create as the emulator transcribes it) are two transcriptions of what
Vertex AI takes. Generated CustomJobSpecs (machines, accelerator types and counts present, absent or wrong, replica
counts, TPU topologies, strategies, disks, regions, container or Python package code) go to both: whatever the rules
pass, rendered as the body the provider sends, the emulator's `customJobs.create` must accept.

The emulator is called in-process (emulator.vertex.create, the handler its HTTP server routes to: the discovery
schema, the field checks, the machine checks), on a fresh state each time. Each example counts its verdict (and
hypothesis's `event()`); the test then checks that both verdicts were drawn (a generator that only made refused
jobs would hold nothing).
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gcp_training_jobs.emulator import vertex_limits
from gcp_training_jobs.emulator.errors import ApiError
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.vertex import create
from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.load import judge_custom_job

#: A day on which the catalog's dated building blocks (N1 GPUs, prebuilt containers) are all current.
TODAY = date(2026, 1, 15)
IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"
#: Every machine type either transcription knows, and a few neither does.
MACHINES = sorted({*vertex_limits.MACHINE_TYPES, *catalog.FIXED_ACCELERATOR_MACHINES, *catalog.N1_GPU_COUNTS,
                   *catalog.TPU_HOSTS, catalog.CLOUD_TPU_MACHINE, *catalog.CPU_MACHINE_TYPES,
                   "n1-standard-3", "a3-highgpu-3g", "g2-standard-7"})
ACCELERATORS = sorted({*catalog.VERTEX_ACCELERATOR_TYPES, "NVIDIA_TESLA_K80", "TPU_V4_POD", "NVIDIA_FAKE_GPU"})
COUNTS = (1, 2, 4, 8, 16, 32, 64, 3, 0, -1)
TOPOLOGIES = sorted({t for _, topologies in vertex_limits.TPU_VM_TOPOLOGIES.values() for t in topologies}
                    | {"3x3", "2x2x2x2", "x4", "0x2"})
REGIONS = ("us-central1", "us-east1", "us-east4", "us-east5", "us-west1", "europe-west4", "asia-northeast1",
           "us-south1", "nowhere-1")
STRATEGIES = ("STANDARD", "SPOT", "FLEX_START", "ON_DEMAND", "LOW_COST", "STRATEGY_UNSPECIFIED", "SOMETIMES")
TIMEOUTS = ("3600s", "86400s", "700000s", "-5s", "0s")
DISK_TYPES = ("pd-ssd", "pd-standard", "hyperdisk-balanced", "pd-extreme")
DISK_SIZES = (100, 64_000, 50, 64_001, 500)
#: Python packages on prebuilt images available on TODAY (catalog.PREBUILT_CONTAINERS), for CPU and for GPU.
PACKAGES = [{"executorImageUri": f"us-docker.pkg.dev/vertex-ai/training/tf-{kind}.2-17.py310:latest",
             "packageUris": ["gs://my-bucket/trainer-0.1.tar.gz"], "pythonModule": "trainer.task"}
            for kind in ("cpu", "gpu")]
#: How many generated jobs; each has one to three pools ("thousands of worker pools").
EXAMPLES = 1500


def coherent_hardware(machine: str) -> list[dict[str, Any]]:
    """The machine specs the catalog says a machine type runs with (so that many generated pools pass the rules);
    the generator also draws from everything else."""
    if machine in catalog.FIXED_ACCELERATOR_MACHINES:
        fixed = catalog.FIXED_ACCELERATOR_MACHINES[machine]
        return [{"acceleratorType": fixed.accelerator, "acceleratorCount": fixed.count}]
    if machine in catalog.N1_GPU_COUNTS:
        return [{}] + [{"acceleratorType": gpu, "acceleratorCount": count}
                       for gpu, counts in catalog.N1_GPU_COUNTS[machine].items() for count in counts]
    if machine == catalog.CLOUD_TPU_MACHINE:  # one TPU, or a Pod (run in fewer regions: catalog.REGION_TPU_PODS)
        return [{"acceleratorType": kind, "acceleratorCount": count}
                for kind, counts in catalog.CLOUD_TPU_ACCELERATOR_COUNTS.items() for count in counts]
    if machine in catalog.TPU_HOSTS:
        return [{"tpuTopology": topology} for topology in catalog.TPU_HOSTS[machine].topologies]
    return [{}]


def regions_for(machine_spec: dict[str, Any]) -> list[str]:
    """The regions offering a pool's accelerator (all training regions for none), and one that is not a region."""
    accelerator = machine_spec.get("acceleratorType")
    offering = [r for r, offered in catalog.REGION_ACCELERATORS.items() if accelerator in offered] \
        if accelerator else list(catalog.VERTEX_TRAINING_REGIONS)
    return sorted(offering) or list(REGIONS)


@st.composite
def machine_specs(draw: st.DrawFn) -> dict[str, Any]:
    machine = draw(st.sampled_from(MACHINES))
    spec: dict[str, Any] = {"machineType": machine, **draw(st.sampled_from(coherent_hardware(machine)))}
    if draw(st.booleans()):  # then perturbed: each field absent, wrong or replaced, or kept
        for key, choices in (("acceleratorType", ACCELERATORS), ("acceleratorCount", COUNTS),
                             ("tpuTopology", TOPOLOGIES)):
            how = draw(st.sampled_from(("keep", "keep", "drop", "other")))
            if how == "drop":
                spec.pop(key, None)
            elif how == "other":
                spec[key] = draw(st.sampled_from(choices))
    return spec


@st.composite
def pools(draw: st.DrawFn, first: bool) -> dict[str, Any]:
    spec = draw(machine_specs())
    replicas = draw(st.sampled_from((1, 1, 1, 2, 3, 0))) if first else draw(st.sampled_from((1, 2, 4, 0)))
    pool: dict[str, Any] = {"machineSpec": spec, "replicaCount": replicas}
    if draw(st.integers(0, 3)) == 0:  # a Python package on a prebuilt image (current on TODAY), else a container
        pool["pythonPackageSpec"] = dict(draw(st.sampled_from(PACKAGES)))
    else:
        pool["containerSpec"] = {"imageUri": IMAGE}
    if draw(st.integers(0, 2)) == 0:
        pool["diskSpec"] = {"bootDiskType": draw(st.sampled_from(DISK_TYPES)),
                            "bootDiskSizeGb": draw(st.sampled_from(DISK_SIZES))}
    return pool


@st.composite
def jobs(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    first = draw(pools(first=True))
    more = draw(st.lists(pools(first=False), max_size=2)) if draw(st.integers(0, 2)) == 0 else []
    spec: dict[str, Any] = {"workerPoolSpecs": [first, *more]}
    if draw(st.booleans()):
        scheduling: dict[str, Any] = {"strategy": draw(st.sampled_from(STRATEGIES))}
        if draw(st.booleans()):
            scheduling["timeout"] = draw(st.sampled_from(TIMEOUTS))
        spec["scheduling"] = scheduling
    region = draw(st.one_of(st.sampled_from(regions_for(first["machineSpec"])), st.sampled_from(REGIONS)))
    return spec, region


def test_the_generators_reach_every_building_block() -> None:
    """Each machine of the emulator's transcription and each accelerator of the catalog is drawable."""
    assert set(vertex_limits.MACHINE_TYPES) <= set(MACHINES)
    assert set(catalog.VERTEX_ACCELERATOR_TYPES) <= set(ACCELERATORS)


def judged_and_sent(job: tuple[dict[str, Any], str], verdicts: Counter[str]) -> None:
    """One generated job judged; if the rules pass it, its rendered body sent to the emulator's create, which must
    accept it. Its verdict counted in `verdicts` (and as hypothesis's event)."""
    spec, region = job
    try:
        judged = judge_custom_job(spec, region=region, job_id="prop_job", today=TODAY)
    except SpecError:
        verdicts["refused (does not parse)"] += 1
        event("refused (does not parse)")
        return
    if not judged.ok:
        verdicts["refused"] += 1
        event("refused")
        return
    verdicts["passed"] += 1
    event("passed")
    if any("pythonPackageSpec" in pool for pool in spec["workerPoolSpecs"]):
        verdicts["passed with a Python package"] += 1
    body = judged.body_for("prop_job", {"team": "vision"})
    try:
        create(EmulatorState(), "my-proj", region, body)
    except ApiError as error:
        pytest.fail(f"validate passed, the emulator refused: {error.message} {error.violations}\nspec: {spec}\n"
                    f"region: {region}\nbody: {body}")


def test_whatever_validate_passes_the_emulator_accepts() -> None:
    """The property over EXAMPLES generated jobs, then what it drew: jobs that pass and jobs that do not (counted
    by this run alone, whatever else the session runs and in whatever order)."""
    verdicts: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(jobs())
    def each(job: tuple[dict[str, Any], str]) -> None:
        judged_and_sent(job, verdicts)

    each()
    assert verdicts["passed"] >= EXAMPLES // 20, verdicts
    assert verdicts["refused"] >= EXAMPLES // 5, verdicts
    assert verdicts["passed with a Python package"] >= EXAMPLES // 100, verdicts
