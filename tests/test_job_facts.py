"""A job's facts, read once (translate.facts.JobFacts): what load.judge builds for every vocabulary and backend,
and what facts_of_body reads from a job as the API holds it; the two agree on the same job."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gcp_training_jobs.jobspec.catalog import DEFAULT_MAX_RUNNING_SECONDS, DEFAULT_TIMEOUT_SECONDS
from gcp_training_jobs.jobspec.load import judge
from gcp_training_jobs.jobspec.translate.facts import (
    OWN_MACHINES,
    PERSISTENT_RESOURCE,
    RESERVATION,
    facts_of_body,
)
from gcp_training_jobs.jobspec.translate.pools import machine_text

TRAINING_INPUT: dict[str, Any] = {"trainingInput": {
    "scaleTier": "CUSTOM", "region": "us-central1", "masterType": "n1-standard-8",
    "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "2"},
                     "imageUri": "us-docker.pkg.dev/p/r/trainer:1"},
    "workerType": "n1-standard-8", "workerCount": "3",
    "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "2"}},
    "scheduling": {"maxRunningTime": "7200s"},
}, "labels": {"team": "ml"}}

CUSTOM_JOB_SPEC: dict[str, Any] = {
    "workerPoolSpecs": [
        {"machineSpec": {"machineType": "g2-standard-24", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 2},
         "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}},
        {"machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 2,
         "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}},
    ],
    "scheduling": {"strategy": "SPOT", "timeout": "3600s"},
}

TUNING: dict[str, Any] = {
    "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                  "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]},
    "trialJobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}}]},
    "maxTrialCount": 12, "parallelTrialCount": 3,
}


def test_a_training_input_on_vertex() -> None:
    judged = judge(TRAINING_INPUT, backend="vertex").checked()
    facts = judged.facts
    assert (facts.backend, facts.kind, facts.region, facts.strategy) == ("vertex", "training", "us-central1", None)
    # sent as jobSpec.scheduling.timeout, named as the user wrote it (cost lines, guardrails)
    assert (facts.timeout.seconds, facts.timeout.field) == (7200, "trainingInput.scheduling.maxRunningTime")
    assert judged.body is not None and judged.body["jobSpec"]["scheduling"]["timeout"] == "7200s"
    assert (facts.parallel_runs, facts.trials) == (1, 1)
    assert facts.labels == {"team": "ml"}
    assert facts.pools == judged.pools
    assert facts.accelerator_totals == {"NVIDIA_TESLA_T4": 8}  # 2 on the master, 2 on each of 3 workers
    assert facts.accelerators == 8
    assert facts.accelerators_by_region == {"us-central1": {"NVIDIA_TESLA_T4": 8}}
    assert facts.runs_on.kind == OWN_MACHINES
    assert facts.pool_path(facts.running[1]) == "jobSpec.workerPoolSpecs[1]"


def test_a_training_input_on_ai_platform() -> None:
    facts = judge(TRAINING_INPUT, backend="ai-platform").checked().facts
    assert (facts.backend, facts.kind, facts.region, facts.ml_v1) == ("ai-platform", "training", "us-central1", True)
    assert (facts.timeout.seconds, facts.timeout.field) == (7200, "trainingInput.scheduling.maxRunningTime")
    assert facts.accelerator_totals == {"NVIDIA_TESLA_T4": 8}
    assert facts.pool_path(facts.running[1]) == "trainingInput.workerType"


def test_a_custom_job_spec() -> None:
    facts = judge(CUSTOM_JOB_SPEC, region="europe-west4", labels={"env": "dev"}).checked().facts
    assert (facts.backend, facts.kind, facts.region, facts.strategy) == ("vertex", "training", "europe-west4", "SPOT")
    assert (facts.timeout.seconds, facts.timeout.field, facts.timeout.per_trial) == (3600, "jobSpec.scheduling.timeout",
                                                                                      False)
    assert facts.labels == {"env": "dev"}
    assert facts.accelerator_totals == {"NVIDIA_L4": 2}
    assert [facts.pool_text(p) for p in facts.running] == ["g2-standard-24 x1 + 2 NVIDIA_L4", "n2-standard-8 x2"]


def test_a_tuning_config() -> None:
    facts = judge(TUNING, region="us-central1").checked().facts
    assert (facts.kind, facts.parallel_runs, facts.trials) == ("tuning", 3, 12)
    assert facts.timeout == dataclasses.replace(facts.timeout, seconds=DEFAULT_TIMEOUT_SECONDS, field=None,
                                                default_of="Vertex AI", per_trial=True)
    assert facts.accelerator_totals == {"NVIDIA_L4": 3}  # one per trial, three trials at once
    assert facts.pool_path(facts.running[0]) == "trialJobSpec.workerPoolSpecs[0]"


def test_a_body_as_the_api_holds_it_reads_as_the_judged_job() -> None:
    for data, options in ((TRAINING_INPUT, {"backend": "vertex"}), (TRAINING_INPUT, {"backend": "ai-platform"}),
                          (CUSTOM_JOB_SPEC, {"region": "us-central1"}), (TUNING, {"region": "us-central1"})):
        judged = judge(data, **options).checked()
        held = facts_of_body(judged.body_for("job-1"), region=judged.facts.region)
        for name in ("backend", "kind", "region", "strategy", "parallel_runs", "trials", "runs_on",
                     "spec_key", "accelerator_totals", "unread"):
            assert getattr(held, name) == getattr(judged.facts, name), (data, name)
        # the same timeout; the judged job names the field its user wrote (a trainingInput's maxRunningTime,
        # which Vertex AI holds as jobSpec.scheduling.timeout), the body the field it holds
        written = judged.facts.timeout.field
        assert held.timeout == dataclasses.replace(judged.facts.timeout, field=held.timeout.field), data
        assert written == held.timeout.field or (written, held.timeout.field) == (
            "trainingInput.scheduling.maxRunningTime", "jobSpec.scheduling.timeout"), data
        assert [p.machine for p in held.running] == [p.machine for p in judged.facts.running]


def test_a_body_names_its_own_region_labels_and_where_it_runs() -> None:
    ml = facts_of_body({"trainingInput": {"scaleTier": "BASIC", "region": "asia-east1"}, "labels": {"a": "b"}})
    assert (ml.region, ml.labels, ml.timeout.seconds) == ("asia-east1", {"a": "b"}, DEFAULT_MAX_RUNNING_SECONDS)
    on_resource = facts_of_body({"jobSpec": {**CUSTOM_JOB_SPEC, "persistentResourceId": "pool-a"}})
    assert (on_resource.runs_on.kind, on_resource.runs_on.persistent_resource_id) == (PERSISTENT_RESOURCE, "pool-a")
    reserved = dict(CUSTOM_JOB_SPEC["workerPoolSpecs"][0])
    reserved["machineSpec"] = {**reserved["machineSpec"], "reservationAffinity": {
        "reservationAffinityType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/p/zones/us-central1-a/reservations/r1"]}}
    facts = facts_of_body({"jobSpec": {"workerPoolSpecs": [reserved]}}, region="us-central1")
    assert facts.runs_on.kind == RESERVATION
    assert (facts.runs_on.reservation_type, facts.runs_on.reservation_name) == (
        "SPECIFIC_RESERVATION", "projects/p/zones/us-central1-a/reservations/r1")


def test_a_body_whose_pools_do_not_read_says_so_once() -> None:
    facts = facts_of_body({"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": 7, "bogus": 1}}]}},
                          region="us-central1")
    assert facts.unread is not None and facts.pools == () and facts.accelerators == 0


@pytest.mark.parametrize(("args", "text"), [
    (("n1-standard-8", "NVIDIA_TESLA_T4", 2), "n1-standard-8 + 2 NVIDIA_TESLA_T4"),
    (("n1-standard-8", "NVIDIA_TESLA_T4", None), "n1-standard-8 + ? NVIDIA_TESLA_T4"),
    (("n2-standard-4", None, None), "n2-standard-4"),
    ((None, None, None), "(no machine type)"),
    (("a2-ultragpu-8g", "NVIDIA_A100_80GB", 8, 3), "a2-ultragpu-8g x3 + 8 NVIDIA_A100_80GB"),
])
def test_one_wording_of_a_machine(args: tuple[Any, ...], text: str) -> None:
    assert machine_text(*args) == text
