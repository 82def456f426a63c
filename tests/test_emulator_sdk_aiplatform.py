"""The Vertex AI SDK's high-level objects against the emulator: `aiplatform.CustomJob` and
`aiplatform.HyperparameterTuningJob` after `aiplatform.init(api_endpoint="http://127.0.0.1:PORT",
api_transport="rest", credentials=AnonymousCredentials(), ...)` (the `vertex_emulator` fixture's `aiplatform()`).

The SDK waits for a job by polling and sleeping 5 s (`google.cloud.aiplatform.jobs`: `time.sleep(_JOB_WAIT_TIME)`);
here its sleep moves the emulator's clock through the `/_emulator/advance` control endpoint instead of the wall
clock, so a job walks through its states while `run()` waits, in no real time.
"""

from __future__ import annotations

import json
import urllib.request
from types import ModuleType
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform import jobs as sdk_jobs
from google.cloud.aiplatform_v1.types import JobState, Scheduling, Trial

from gcp_training_jobs.emulator import FAIL_LABEL
from gcp_training_jobs.testing import VertexEmulator

IMAGE = "us-docker.pkg.dev/my-project/trainers/resnet:1"


def pools(machine_type: str = "g2-standard-8", replicas: int = 1, **machine: Any) -> list[dict[str, Any]]:
    return [{"machine_spec": {"machine_type": machine_type, **machine}, "replica_count": replicas,
             "container_spec": {"image_uri": IMAGE}}]


def l4(count: int = 1) -> list[dict[str, Any]]:
    return pools(accelerator_type="NVIDIA_L4", accelerator_count=count)


class EmulatedTime:
    """What `google.cloud.aiplatform.jobs` calls `time`: sleeping advances the emulator's clock over HTTP."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.slept = 0.0

    def time(self) -> float:
        return self.slept

    def sleep(self, seconds: float) -> None:
        request = urllib.request.Request(f"{self.endpoint}/_emulator/advance", method="POST",
                                         data=json.dumps({"seconds": seconds}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        self.slept += seconds


@pytest.fixture
def aiplatform(vertex_emulator: VertexEmulator) -> ModuleType:
    return vertex_emulator.aiplatform()


@pytest.fixture
def clock(vertex_emulator: VertexEmulator, monkeypatch: pytest.MonkeyPatch) -> EmulatedTime:
    emulated = EmulatedTime(vertex_emulator.endpoint)
    monkeypatch.setattr(sdk_jobs, "time", emulated)
    return emulated


def test_run_waits_while_the_job_moves_on_the_emulator_clock(vertex_emulator: VertexEmulator, aiplatform: ModuleType,
                                                             clock: EmulatedTime) -> None:
    vertex_emulator.state.set_phase_seconds(10)  # QUEUED, PENDING, RUNNING: 10 s each
    job = aiplatform.CustomJob(display_name="resnet", worker_pool_specs=l4(), labels={"team": "vision"})
    job.run(scheduling_strategy=Scheduling.Strategy.SPOT)
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert clock.slept >= 30  # the SDK slept (emulated) until the three phases had passed
    assert len(vertex_emulator.state.requests("customJobs.get")) >= 3
    assert job.job_spec.scheduling.strategy == Scheduling.Strategy.SPOT


def test_submit_get_list_cancel_wait_delete(vertex_emulator: VertexEmulator, aiplatform: ModuleType,
                                            clock: EmulatedTime) -> None:
    vertex_emulator.state.set_phase_seconds(1e9)  # jobs stay QUEUED
    submitted = []
    for name, team in (("a-1", "a"), ("b-1", "b"), ("a-2", "a")):
        job = aiplatform.CustomJob(display_name=name, worker_pool_specs=l4(), labels={"team": team})
        job.submit()
        submitted.append(job)
    got = aiplatform.CustomJob.get(submitted[0].resource_name)
    assert got.display_name == "a-1" and got.state == JobState.JOB_STATE_QUEUED
    listed = aiplatform.CustomJob.list(filter='labels.team="a"')
    assert sorted(j.display_name for j in listed) == ["a-1", "a-2"]
    assert all(r["query"].get("filter") == 'labels.team="a"' for r in vertex_emulator.state.requests("customJobs.list"))

    submitted[1].cancel()
    with pytest.raises(RuntimeError, match="CANCELED"):  # the SDK's wait ends on JOB_STATE_CANCELLED and raises
        submitted[1].wait_for_completion()
    assert submitted[1].state == JobState.JOB_STATE_CANCELLED
    submitted[1].delete()
    assert sorted(j.display_name for j in aiplatform.CustomJob.list()) == ["a-1", "a-2"]


def test_a_tpu_v5e_slice_runs(aiplatform: ModuleType) -> None:
    job = aiplatform.CustomJob(display_name="v5e", worker_pool_specs=pools("ct5lp-hightpu-4t", tpu_topology="4x4"))
    job.run()
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert job.job_spec.worker_pool_specs[0].machine_spec.tpu_topology == "4x4"


def test_a_job_that_fails_makes_run_raise(aiplatform: ModuleType) -> None:
    job = aiplatform.CustomJob(display_name="broken", worker_pool_specs=l4(), labels={FAIL_LABEL: "failed"})
    with pytest.raises(RuntimeError, match="exited with a non-zero status of 1"):
        job.run()
    assert job.state == JobState.JOB_STATE_FAILED


def test_the_refusal_reaches_run_in_vertex_s_words(vertex_emulator: VertexEmulator, aiplatform: ModuleType) -> None:
    job = aiplatform.CustomJob(display_name="too-many", worker_pool_specs=l4(3))
    with pytest.raises(exceptions.BadRequest) as caught:
        job.run()
    assert caught.value.message.endswith(
        ': The accelerator count "3" is not allowed. The allowed numbers of accelerator "NVIDIA_L4" to use with '
        'machine type "g2-standard-8" are: [1].')
    assert vertex_emulator.state.jobs() == []


def test_an_injected_503_on_create_reaches_run_and_creates_nothing(vertex_emulator: VertexEmulator,
                                                                    aiplatform: ModuleType) -> None:
    vertex_emulator.state.inject_faults(503, method="customJobs.create")
    with pytest.raises(exceptions.ServiceUnavailable):
        aiplatform.CustomJob(display_name="x", worker_pool_specs=l4()).run()
    assert vertex_emulator.state.jobs() == []
    assert vertex_emulator.state.pending_faults() == []


def tuning_job(aiplatform: ModuleType, worker_pool_specs: list[dict[str, Any]]) -> Any:
    trial = aiplatform.CustomJob(display_name="trial", worker_pool_specs=worker_pool_specs)
    return aiplatform.HyperparameterTuningJob(
        display_name="tune", custom_job=trial, metric_spec={"accuracy": "maximize"},
        parameter_spec={
            "learning_rate": hpt.DoubleParameterSpec(min=1e-4, max=1e-1, scale="log"),
            "batch_size": hpt.DiscreteParameterSpec(values=[16, 32, 64], scale="linear"),
            "optimizer": hpt.CategoricalParameterSpec(values=["adam", "sgd"]),
            "layers": hpt.IntegerParameterSpec(min=2, max=8, scale="linear"),
        },
        max_trial_count=6, parallel_trial_count=2, search_algorithm="random", labels={"team": "vision"})


def test_a_tuning_job_runs_its_trials(vertex_emulator: VertexEmulator, aiplatform: ModuleType,
                                      clock: EmulatedTime) -> None:
    vertex_emulator.state.set_phase_seconds(30)  # 3 waves of 2 trials in the 30 s RUNNING phase
    job = tuning_job(aiplatform, l4())
    job.run()
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    trials = job.trials
    assert [t.id for t in trials] == ["1", "2", "3", "4", "5", "6"]
    assert all(t.state == Trial.State.SUCCEEDED for t in trials)
    for trial in trials:
        values = {p.parameter_id: p.value for p in trial.parameters}
        assert 1e-4 <= values["learning_rate"] <= 1e-1 and values["batch_size"] in (16, 32, 64)
        assert values["optimizer"] in ("adam", "sgd") and 2 <= values["layers"] <= 8
        assert [m.metric_id for m in trial.final_measurement.metrics] == ["accuracy"]
    stored = vertex_emulator.state.jobs()[0]["job"]
    assert stored["studySpec"]["algorithm"] == "RANDOM_SEARCH"  # sent as 3, kept by name
    assert stored["studySpec"]["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
    assert [j.display_name for j in aiplatform.HyperparameterTuningJob.list(filter='labels.team="vision"')] == ["tune"]


def test_a_tuning_job_s_trial_spec_is_judged_like_a_custom_job(vertex_emulator: VertexEmulator,
                                                               aiplatform: ModuleType) -> None:
    with pytest.raises(exceptions.BadRequest) as caught:
        tuning_job(aiplatform, l4(2)).run()
    (detail,) = caught.value.details
    assert detail["fieldViolations"][0]["field"] == (
        "hyperparameter_tuning_job.trial_job_spec.worker_pool_specs[0].machine_spec.accelerator_count")
    assert 'The accelerator count "2" is not allowed.' in caught.value.message
    assert vertex_emulator.state.jobs() == []
