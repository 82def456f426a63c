"""Property-based: whatever a user writes, judging it raises nothing but the project's SpecError, and every
spec that passes renders to bodies Google's schemas accept."""

from __future__ import annotations

from datetime import date
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.jobspec import catalog
from components.jobspec.core.errors import SpecError
from components.jobspec.load import load_custom_job, load_job
from components.jobspec.render.bodies import render_body
from components.jobspec.vocab.training_input import _integral
from tests.helpers import assert_ml_body_valid, assert_vertex_body_valid, leaves

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 20), st.floats(allow_nan=True),
                    st.text(max_size=12), st.sampled_from(["1.12", "2.11", "3.7", "gs://bkt/x", "8", "CUSTOM"]))
machine = st.sampled_from((*catalog.MACHINE_TYPES[::3], "cloud_tpu", "nope", None))
gpu = st.sampled_from((*catalog.ACCELERATOR_TYPES, "NVIDIA_FAKE", None))
count = st.one_of(st.sampled_from([0, 1, 2, 3, 4, 8, 16, "4", 4.0, 2.5, -1, True]), st.none())
accel = st.fixed_dictionaries({}, optional={"type": gpu, "count": count, "cores": scalars})
replica = st.fixed_dictionaries({}, optional={"acceleratorConfig": st.one_of(accel, scalars),
                                              "imageUri": st.sampled_from(["gcr.io/p/i:1", "", None])})
training_input = st.fixed_dictionaries({}, optional={
    "scaleTier": st.sampled_from((*catalog.SCALE_TIERS, "HUGE", None)),
    "masterType": machine, "workerType": machine, "parameterServerType": machine, "evaluatorType": machine,
    "masterConfig": replica, "workerConfig": replica, "parameterServerConfig": replica,
    "workerCount": count, "parameterServerCount": count, "evaluatorCount": count,
    "region": st.sampled_from((*catalog.TRAINING_REGIONS[::2], "us-moon1", None)),
    "runtimeVersion": st.sampled_from(("1.12", "1.15", "2.11", "9.9", None)),
    "pythonModule": st.sampled_from(("trainer.task", None)),
    "packageUris": st.one_of(st.lists(st.sampled_from(["gs://bkt/t.tar.gz", "t.tar.gz"]), max_size=2), scalars),
    "jobDir": st.sampled_from(("gs://bkt/out", "/tmp", None)),
    "args": st.one_of(st.lists(st.text(max_size=5), max_size=2), scalars),
    "typo": scalars,
})
jobs = st.one_of(
    st.fixed_dictionaries({"trainingInput": training_input},
                          optional={"jobId": st.text(max_size=8), "labels": st.dictionaries(st.text(max_size=4),
                                                                                           scalars, max_size=2)}),
    scalars, st.lists(scalars, max_size=2),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs, st.booleans())
def test_judging_any_input_raises_only_spec_errors_and_valid_specs_render(data: Any, partial: bool) -> None:
    try:
        job = load_job(data, default_region="us-central1", partial=partial)
    except SpecError as error:
        assert error.problems, "a SpecError always carries its problems"
        for problem in error.problems:
            assert problem.message and isinstance(problem.path, str)
        return
    assert_ml_body_valid(render_body(job, "ai-platform", "j"))
    try:
        body = render_body(job, "vertex", "j")
    except SpecError as error:
        assert error.problems
        return
    assert_vertex_body_valid(body)


# --- A CustomJobSpec (Vertex AI's vocabulary) ---------------------------------------------------------------

vx_machine = st.sampled_from((*catalog.VERTEX_MACHINE_TYPES[::4], "a3-highgpu-8g", "ct5lp-hightpu-4t", "cloud-tpu",
                              "n1-standard-8", "nope", None))
vx_accelerator = st.sampled_from((*catalog.VERTEX_ACCELERATOR_TYPES, "TPU_V4_POD", "NVIDIA_FAKE", None))
vx_machine_spec = st.fixed_dictionaries({}, optional={
    "machineType": vx_machine, "acceleratorType": vx_accelerator, "acceleratorCount": count,
    "tpuTopology": st.sampled_from(["4x4", "2x2", "1x1", "2x2x1", "x", None]),
    "reservationAffinity": st.one_of(scalars, st.fixed_dictionaries({}, optional={
        "reservationAffinityType": st.sampled_from([*catalog.RESERVATION_AFFINITY_TYPES, "NOPE"]),
        "key": st.sampled_from([catalog.RESERVATION_NAME_KEY, "k"]),
        "values": st.lists(st.sampled_from(["projects/p/zones/us-central1-a/reservations/r", "r"]), max_size=2)})),
    "machine_type": scalars,
})
vx_pool = st.one_of(st.just({}), st.fixed_dictionaries({}, optional={
    "machineSpec": st.one_of(vx_machine_spec, scalars),
    "replicaCount": count,
    "containerSpec": st.fixed_dictionaries({}, optional={"imageUri": st.sampled_from(
        ["us-docker.pkg.dev/p/r/t:1", "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest", "", None]),
        "args": st.lists(st.text(max_size=4), max_size=2)}),
    "pythonPackageSpec": st.fixed_dictionaries({}, optional={
        "executorImageUri": st.sampled_from(["us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest",
                                             "gcr.io/x/y:1", None]),
        "packageUris": st.lists(st.sampled_from(["gs://bkt/t.tar.gz", "t.tar.gz"]), max_size=2),
        "pythonModule": st.sampled_from(["trainer.task", None])}),
    "diskSpec": st.fixed_dictionaries({}, optional={"bootDiskType": st.sampled_from(["pd-ssd", "pd-fast"]),
                                                    "bootDiskSizeGb": st.sampled_from([50, 100, 500, "200"])}),
}))
#: Pools that are valid in us-central1 (so that valid specs are generated often, not only refused ones).
good_pool = st.sampled_from([
    {"machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8},
     "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1", "args": ["--x=1"]}},
    {"machineSpec": {"machineType": "g2-standard-8"}, "replicaCount": "2",
     "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}, "diskSpec": {"bootDiskSizeGb": 200}},
    {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_V100", "acceleratorCount": 2},
     "replicaCount": 1.0, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}},
    {"machineSpec": {"machineType": "n2-standard-8", "reservationAffinity": {"reservationAffinityType":
                                                                              "NO_RESERVATION"}},
     "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1", "command": ["python"]}},
])
custom_job_specs = st.one_of(st.fixed_dictionaries({
    "workerPoolSpecs": st.one_of(good_pool, st.builds(lambda a, b: [a, *b], good_pool,
                                                      st.lists(st.one_of(st.just({}), good_pool), max_size=2))),
}, optional={
    "scheduling": st.fixed_dictionaries({}, optional={"strategy": st.sampled_from(["STANDARD", "SPOT"]),
                                                      "timeout": st.sampled_from(["3600s", "0.5s"]),
                                                      "disableRetries": st.booleans()}),
    "enableWebAccess": st.booleans(),
    "network": st.sampled_from(["projects/123/global/networks/vpc", "default"]),
}), st.fixed_dictionaries({}, optional={
    "workerPoolSpecs": st.one_of(st.lists(vx_pool, max_size=3), vx_pool, scalars),
    "scheduling": st.one_of(scalars, st.fixed_dictionaries({}, optional={
        "strategy": st.sampled_from([*catalog.SCHEDULING_STRATEGIES, "SPOTTY"]),
        "timeout": st.sampled_from(["3600s", "1h", "0s", "999999s"]),
        "maxWaitDuration": st.sampled_from(["0s", "7200s", "2h"]),
        "restartJobOnWorkerRestart": scalars, "disableRetries": st.booleans()})),
    "persistentResourceId": st.sampled_from(["my-cluster", "Bad_Id"]),
    "enableWebAccess": scalars,
    "worker_pool_specs": scalars,
}))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(custom_job_specs, st.sampled_from(["us-central1", "us-east5", "europe-west4", "us-moon1"]),
       st.dates(min_value=date(2024, 1, 1), max_value=date(2027, 12, 31)))
def test_judging_any_custom_job_spec_raises_only_spec_errors_and_valid_ones_render_unchanged(
        data: Any, region: str, on: date) -> None:
    try:
        job = load_custom_job(data, region=region, today=on)
    except SpecError as error:
        assert error.problems
        for problem in error.problems:
            assert problem.message and isinstance(problem.path, str)
        return
    body = render_body(job, "vertex", "j")
    assert_vertex_body_valid(body)
    pools = data["workerPoolSpecs"]
    given = {**data, "workerPoolSpecs": [pools] if isinstance(pools, dict) else pools}
    rendered = dict(leaves(body["jobSpec"]))
    for path, value in leaves(given):
        if value is None:
            continue  # null means "not set" in the JSON API: left out
        want = str(_integral(value)) if path[-1] == "replicaCount" else value
        assert rendered[path] == want or rendered[path] == _integral(value), (path, value, rendered.get(path))
