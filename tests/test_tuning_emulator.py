"""The emulator's Vertex AI hyperparameterTuningJobs surface, driven by Google's own client and by the project's
lifecycle code: Vertex's checks of a HyperparameterTuningJob (400 INVALID_ARGUMENT naming the field), trials that
progress on the emulator's clock with a deterministic best trial, list / cancel / delete, and create with lookup,
adoption and reconciliation through the tuning backend."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.backends.vertex_tuning import VertexTuningBackend
from gcp_training_jobs.emulator import API_METHODS, Emulator
from gcp_training_jobs.emulator.discovery import validate_body
from gcp_training_jobs.jobspec.core.names import RESOURCE_LABEL, SPEC_LABEL
from gcp_training_jobs.jobspec.load import load_job, render_body
from tests.conftest_emulator import HeldDelays
from tests.helpers import FakeClock, tuning_training_input

PROJECT, REGION = "demo-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
SCHEMA = "GoogleCloudAiplatformV1HyperparameterTuningJob"
IDENTITY = {RESOURCE_LABEL: "a" * 20, SPEC_LABEL: "b" * 20}


def tuning(client: Any) -> Any:
    return client.projects().locations().hyperparameterTuningJobs()


def body(**changes: Any) -> dict[str, Any]:
    """A body rendered by the project (6 trials, 2 at a time), with `changes` on top."""
    rendered = render_body(load_job(tuning_training_input(), backend="vertex"), "vertex", "tune_1")
    rendered.update(changes)
    return rendered


def rejected(client: Any, sent: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(HttpError) as caught:
        tuning(client).create(parent=PARENT, body=sent).execute()
    assert caught.value.status_code == 400
    error: dict[str, Any] = json.loads(caught.value.content)["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    return error


def test_a_body_rendered_by_the_project_is_created_and_read_back(emulator: Emulator, vertex_client: Any) -> None:
    emulator.state.strict_int64 = True
    sent = body()
    created = tuning(vertex_client).create(parent=PARENT, body=copy.deepcopy(sent)).execute()
    assert created["name"].startswith(f"{PARENT}/hyperparameterTuningJobs/")
    assert created["state"] == "JOB_STATE_QUEUED" and "trials" not in created
    got = tuning(vertex_client).get(name=created["name"]).execute()
    assert {k: got[k] for k in sent} == sent
    assert validate_body("aiplatform", SCHEMA, got) == []
    assert {f"hyperparameterTuningJobs.{m}" for m in ("create", "get", "list", "cancel", "delete")} <= API_METHODS


def _study(**changes: Any) -> dict[str, Any]:
    study = copy.deepcopy(body()["studySpec"])
    study.update(changes)
    return study


CHECKS: list[tuple[dict[str, Any], str, str]] = [
    (body(displayName=""), "hyperparameter_tuning_job.display_name", "Required field is not set"),
    (body(labels={"Team": "x"}), "hyperparameter_tuning_job.labels", "Invalid label key"),
    ({k: v for k, v in body().items() if k != "studySpec"}, "hyperparameter_tuning_job.study_spec",
     "Required field is not set"),
    (body(studySpec=_study(metrics=[])), "hyperparameter_tuning_job.study_spec.metrics",
     "At least one metric is required"),
    (body(studySpec=_study(metrics=[{"metricId": "accuracy"}])),
     "hyperparameter_tuning_job.study_spec.metrics[0].goal", "Required field is not set"),
    (body(studySpec=_study(parameters=[])), "hyperparameter_tuning_job.study_spec.parameters",
     "At least one parameter is required"),
    (body(studySpec=_study(parameters=[{"parameterId": "lr"}])), "hyperparameter_tuning_job.study_spec.parameters[0]",
     "Exactly one of double_value_spec"),
    (body(studySpec=_study(parameters=[{"doubleValueSpec": {"minValue": 0, "maxValue": 1}}])),
     "hyperparameter_tuning_job.study_spec.parameters[0].parameter_id", "Required field is not set"),
    (body(maxTrialCount=0), "hyperparameter_tuning_job.max_trial_count", "must be greater than 0"),
    ({k: v for k, v in body().items() if k != "parallelTrialCount"}, "hyperparameter_tuning_job.parallel_trial_count",
     "Required field is not set"),
    (body(maxTrialCount=2, parallelTrialCount=3), "hyperparameter_tuning_job.parallel_trial_count",
     "must not be greater than max_trial_count"),
    (body(maxFailedTrialCount=-1), "hyperparameter_tuning_job.max_failed_trial_count", "must not be negative"),
    ({k: v for k, v in body().items() if k != "trialJobSpec"}, "hyperparameter_tuning_job.trial_job_spec",
     "Required field is not set"),
    (body(trialJobSpec={"workerPoolSpecs": []}), "hyperparameter_tuning_job.trial_job_spec.worker_pool_specs",
     "At least one worker pool spec is required"),
    (body(trialJobSpec={"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "2",
                                             "containerSpec": {"imageUri": "x"}}]}),
     "hyperparameter_tuning_job.trial_job_spec.worker_pool_specs[0].replica_count", "exactly one replica"),
]


@pytest.mark.parametrize(("sent", "field", "words"), CHECKS, ids=[f"{i}-{f.rsplit('.', 1)[-1]}"
                                                                   for i, (_, f, _) in enumerate(CHECKS)])
def test_vertex_s_checks_of_a_tuning_job(emulator: Emulator, vertex_client: Any, sent: dict[str, Any], field: str,
                                         words: str) -> None:
    error = rejected(vertex_client, sent)
    assert words in error["message"]
    assert error["details"][0]["fieldViolations"][0]["field"] == field
    assert emulator.state.jobs() == []


def test_the_discovery_schema_is_applied(emulator: Emulator, vertex_client: Any) -> None:
    error = rejected(vertex_client, body(studySpec=_study(algorithm="BAYES")))
    assert 'studySpec.algorithm: invalid value "BAYES"' in error["message"]
    error = rejected(vertex_client, body(trialJobSpec={**body()["trialJobSpec"], "foo": 1}))
    assert 'unknown field "foo"' in error["message"]


def states(job: dict[str, Any]) -> list[tuple[str, str]]:
    return [(t["id"], t["state"]) for t in job.get("trials", [])]


def test_trials_progress_on_the_emulator_clock_to_a_deterministic_best(emulator: Emulator,
                                                                       vertex_client: Any) -> None:
    emulator.state.set_phase_seconds(30)  # QUEUED 30 s, PENDING 30 s, RUNNING 30 s: 3 waves of 2 trials, 10 s each
    name = tuning(vertex_client).create(parent=PARENT, body=body()).execute()["name"]

    def read() -> dict[str, Any]:
        job: dict[str, Any] = tuning(vertex_client).get(name=name).execute()
        return job

    assert states(read()) == []
    emulator.state.advance(61)
    running = read()
    assert running["state"] == "JOB_STATE_RUNNING" and states(running) == [("1", "ACTIVE"), ("2", "ACTIVE")]
    emulator.state.advance(10)
    assert states(read()) == [("1", "SUCCEEDED"), ("2", "SUCCEEDED"), ("3", "ACTIVE"), ("4", "ACTIVE")]
    assert VertexTuningBackend().outputs(read(), Target(PROJECT, REGION))["trialCount"] == 4
    emulator.state.advance(30)
    done = read()
    assert done["state"] == "JOB_STATE_SUCCEEDED" and [s for _, s in states(done)] == ["SUCCEEDED"] * 6
    assert validate_body("aiplatform", SCHEMA, done) == []
    for trial in done["trials"]:
        values = {p["parameterId"]: p["value"] for p in trial["parameters"]}
        assert 0.0001 <= values["lr"] <= 0.1 and values["layers"] in range(1, 9)
        assert trial["finalMeasurement"]["metrics"][0]["metricId"] == "accuracy"
    outputs = VertexTuningBackend().outputs(done, Target(PROJECT, REGION))
    assert outputs["trialCount"] == 6 and outputs["bestTrial"]["id"] == "3"
    emulator.state.set_phase_seconds(0)
    again = tuning(vertex_client).create(parent=PARENT, body=body()).execute()  # finished at once
    assert [t["parameters"] for t in again["trials"]] == [t["parameters"] for t in done["trials"]]
    assert VertexTuningBackend().outputs(again, Target(PROJECT, REGION))["bestTrial"] == outputs["bestTrial"]


def test_cancel_stops_the_running_trials_and_only_a_finished_job_is_deleted(emulator: Emulator,
                                                                             vertex_client: Any) -> None:
    emulator.state.set_phase_seconds(30)
    name = tuning(vertex_client).create(parent=PARENT, body=body()).execute()["name"]
    emulator.state.advance(75)
    with pytest.raises(HttpError) as caught:
        tuning(vertex_client).delete(name=name).execute()
    assert caught.value.status_code == 400 and b"HyperparameterTuningJob" in caught.value.content
    assert tuning(vertex_client).cancel(name=name, body={}).execute() == {}
    cancelled = tuning(vertex_client).get(name=name).execute()
    assert cancelled["state"] == "JOB_STATE_CANCELLED"
    assert states(cancelled) == [("1", "SUCCEEDED"), ("2", "SUCCEEDED"), ("3", "INFEASIBLE"), ("4", "INFEASIBLE")]
    assert tuning(vertex_client).delete(name=name).execute()["done"] is True
    with pytest.raises(HttpError) as caught:
        tuning(vertex_client).get(name=name).execute()
    assert caught.value.status_code == 404 and b"HyperparameterTuningJob" in caught.value.content


def test_list_filters_by_label_leaves_trials_out_and_keeps_custom_jobs_apart(emulator: Emulator,
                                                                             vertex_client: Any) -> None:
    emulator.state.set_phase_seconds(0)
    mine = tuning(vertex_client).create(parent=PARENT, body=body(labels={"team": "ml"})).execute()
    tuning(vertex_client).create(parent=PARENT, body=body(labels={"team": "vision"})).execute()
    listed = tuning(vertex_client).list(parent=PARENT, filter='labels.team="ml"').execute()
    (only,) = listed["hyperparameterTuningJobs"]
    assert only["name"] == mine["name"] and "trials" not in only and mine["trials"]
    assert vertex_client.projects().locations().customJobs().list(parent=PARENT).execute() == {}


# -- the lifecycle through the tuning backend ----------------------------------------------------------------

@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def jobs(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Jobs:
    """The lifecycle through the tuning backend, on a fake clock (its waits are counted, never timed)."""
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")
    return Jobs(VertexTuningBackend(), Target(PROJECT, REGION, emulator.url), patience=30,
                clock=clock.time, sleep=clock.sleep)


def test_create_adopts_a_live_job_of_the_same_identity_and_stop_cancels_then_keeps_or_deletes(emulator: Emulator,
                                                                                      jobs: Jobs) -> None:
    sent = body(labels={**body()["labels"], **IDENTITY})
    first = jobs.create("tune_1", sent, IDENTITY)
    again = jobs.create("tune_1", sent, IDENTITY)
    assert again["name"] == first["name"] and len(emulator.state.jobs()) == 1
    assert len(emulator.state.requests("hyperparameterTuningJobs.create")) == 1
    assert jobs.backend.job_id_of(first) == "tune_1"
    assert jobs.stop(first["name"]) == "cancelled"
    assert jobs.stop(first["name"]) == "kept" and len(emulator.state.jobs()) == 1  # its history stays
    assert jobs.stop(first["name"], delete_record=True) == "deleted"
    assert jobs.stop(first["name"]) == "gone" and emulator.state.jobs() == []


def test_a_create_answered_after_the_client_gave_up_is_adopted_once_it_lands(
        emulator: Emulator, jobs: Jobs, clock: FakeClock, held_delays: HeldDelays,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS", "1.0")  # the held create times out after it
    emulator.state.inject_delay(2.0, count=1, method="hyperparameterTuningJobs.create")
    clock.then = lambda _: held_delays.release()  # it lands while the reconcile sleeps the first time
    created = jobs.create("tune_1", body(labels={**body()["labels"], **IDENTITY}), IDENTITY)
    (made,) = emulator.state.jobs()
    assert held_delays.seconds == [2.0]
    assert created["name"] == made["name"]
    assert len(emulator.state.requests("hyperparameterTuningJobs.create")) == 1
    # Before the create; after it timed out (not there yet); after the sleep it landed in (adopted).
    assert len(emulator.state.requests("hyperparameterTuningJobs.list")) == 3
    assert clock.sleeps == [0.001]


def test_wait_follows_the_job_to_its_end_with_the_trials_in_its_outputs(emulator: Emulator, jobs: Jobs,
                                                                        clock: FakeClock) -> None:
    emulator.state.set_phase_seconds(30)  # QUEUED, PENDING, RUNNING 30 s each
    clock.then = emulator.state.advance  # the job moves on the lifecycle's clock only
    seen: list[str] = []
    jobs.log = seen.append
    created = jobs.create("tune_1", body(labels={**body()["labels"], **IDENTITY}), IDENTITY)
    finished = jobs.wait(created["name"], 3600)
    assert finished is not None and jobs.backend.state(finished) == "SUCCEEDED"
    assert clock.sleeps == [1, 2, 4, 8, 16, 30, 30]  # backoff from 1 s, capped at 30 s: polled at 0, 1, ... 91 s
    assert [line.rsplit(": ", 1)[1] for line in seen] == [
        "QUEUED", "PREPARING", "RUNNING", "SUCCEEDED"]  # as the backend names them
    assert len(emulator.state.requests("hyperparameterTuningJobs.get")) == len(clock.sleeps) + 1
    outputs = jobs.backend.outputs(finished, jobs.target)
    assert outputs["trialCount"] == 6 and outputs["bestTrial"]["metrics"]["accuracy"] > 0
