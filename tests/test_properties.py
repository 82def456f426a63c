"""Property-based: whatever a user writes, judging it raises nothing but the project's SpecError, and every
spec that passes renders to bodies Google's schemas accept."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.jobspec import catalog
from components.jobspec.errors import SpecError
from components.jobspec.load import load_job
from components.jobspec.render import render_body
from tests.helpers import assert_ml_body_valid, assert_vertex_body_valid

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
