"""What a job has cost so far (review.run_cost): a tuning job's machine time is the sum of its trials' own runs, as
the API reports them, not its run time times its parallel trials; a job on a reservation spends only the fee it
adds; every figure says what it is and what it is not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.review.run_cost import WHAT_IT_IS_NOT, run_cost
from gcp_training_jobs.jobspec.translate.facts import facts_of_body

N1_4 = 0.21849885  # n1-standard-4 in us-central1, Google's own figure (the table's)


def pool(machine: str) -> dict[str, object]:
    return {"machineSpec": {"machineType": machine}, "replicaCount": 1,
            "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/i:1"}}

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
SWEEP = {"parallelTrialCount": 2, "maxTrialCount": 3, "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4")]}}


def _trial(start: str, end: str | None = None) -> dict[str, str]:
    return {"startTime": f"2026-11-28T{start}:00Z", **({"endTime": f"2026-11-28T{end}:00Z"} if end else {})}


def test_a_tuning_job_spends_the_sum_of_its_trials_runs() -> None:
    body = {**SWEEP, "startTime": "2026-11-28T08:00:00Z", "endTime": "2026-11-28T11:00:00Z",
            "trials": [_trial("08:00", "09:00"), _trial("08:00", "08:30"), _trial("09:00", "11:00")]}
    cost = run_cost(body, facts_of_body(body, region="us-central1"), "sweep", NOW)
    assert cost.how == "trials' run times" and cost.hours == pytest.approx(3.5)  # not 3 h x 2 parallel trials
    assert cost.usd == pytest.approx(3.5 * N1_4)
    running = {**body, "endTime": None, "trials": [_trial("08:00", "09:00"), _trial("11:00")]}
    assert run_cost(running, facts_of_body(running, region="us-central1"), "s", NOW).hours == pytest.approx(2.0)


def test_a_tuning_job_without_trials_in_the_answer_counts_its_parallel_trials_and_says_so() -> None:
    body = {**SWEEP, "startTime": "2026-11-28T08:00:00Z", "endTime": "2026-11-28T09:00:00Z"}
    cost = run_cost(body, facts_of_body(body, region="us-central1"), "sweep", NOW)
    assert cost.how == "run time x parallel trials" and cost.usd == pytest.approx(2 * N1_4)


def test_a_job_on_a_reservation_spends_the_fee_it_adds() -> None:
    spec = {"machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                            "acceleratorCount": 8, "reservationAffinity": {
                                "reservationAffinityType": "SPECIFIC_RESERVATION",
                                "key": "compute.googleapis.com/reservation-name", "values": ["r"]}},
            "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/i:1"}}
    body = {"jobSpec": {"workerPoolSpecs": [spec]}, "startTime": "2026-11-28T10:00:00Z"}
    cost = run_cost(body, facts_of_body(body, region="us-central1"), "llm", NOW)
    machines = prices.active_table().machine("a3-highgpu-8g", "us-central1").on_demand
    assert machines is not None and cost.hours == pytest.approx(2.0)
    assert cost.usd == pytest.approx(2.0 * machines * prices.RESERVATION_FEE.share)
    assert "not the invoice" in WHAT_IT_IS_NOT and "credits, taxes" in WHAT_IT_IS_NOT
