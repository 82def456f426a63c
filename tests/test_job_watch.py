"""What the TrainingJob provider says about a job after its create, against the emulator over real HTTP: the stack
label it carries beside its identity, its `costUsd` output (run time x the rate it runs at, updated by a read, i.e.
`pulumi refresh`), and a waiting `pulumi up`'s reports (each state change, every minute the last log line, and a
FAILED job's error with its last 20 log lines), all on the provider's injected clocks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.logging_v2 import TRACEBACK
from gcp_training_jobs.jobspec.core.names import RESOURCE_LABEL, SPEC_LABEL, STACK_LABEL
from gcp_training_jobs.jobspec.review.run_cost import parse_time, run_seconds
from gcp_training_jobs.jobspec.translate.facts import facts_of_body
from gcp_training_jobs.resources.job_model.identity import identity_labels, stack_label
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from gcp_training_jobs.resources.training_job.review import LAST_LINES, cost_usd
from tests.helpers import FakeClock, t4_job
from tests.helpers import props as helpers_props

PHASE = 1800.0
#: 3 x n1-standard-8 + 6 NVIDIA_TESLA_T4 in us-central1 on demand, from the bundled price table (as `plan` says).
T4_CLUSTER_USD_PER_HOUR = 3.7259931
IDENTITY = "organization/gcp-training-jobs/dev/resnet"


@pytest.fixture
def emulator(frozen_emulator: Emulator) -> Emulator:
    """The emulator on a frozen clock: its jobs move only as the test advances it, never with real time."""
    return frozen_emulator


@pytest.fixture(autouse=True)
def _emulator_time(provider: TrainingJobProvider, emulator: Emulator) -> None:
    """The emulator's time is the jobs' time: a job's cost so far is counted to it."""
    provider.wall_clock = emulator.state.now  # type: ignore[method-assign]


def props(backend: str, job: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return helpers_props(backend, job, **{"identity": IDENTITY, **extra})


def create(provider: TrainingJobProvider, inputs: dict[str, Any]) -> dict[str, Any]:
    checked = provider.check({}, inputs)
    assert checked.failures == [], [(f.property, f.reason) for f in checked.failures]
    return dict(provider.create(checked.inputs).outs)


def held(emulator: Emulator) -> dict[str, Any]:
    (job,) = [entry["job"] for entry in emulator.state.jobs()]
    return dict(job)


# -- the stack label ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["ai-platform", "vertex"])
def test_a_job_carries_its_stacks_label_beside_its_unchanged_identity(provider, emulator, backend) -> None:
    inputs = props(backend)
    create(provider, inputs)
    labels = held(emulator)["labels"]
    assert labels[STACK_LABEL] == stack_label("gcp-training-jobs", "dev")[STACK_LABEL]
    identity = identity_labels(IDENTITY, inputs["job"], backend)
    assert {k: labels[k] for k in (RESOURCE_LABEL, SPEC_LABEL)} == identity  # what adoption and the diff read


def test_the_stack_label_is_of_the_project_and_stack_not_the_organization_or_the_resource() -> None:
    assert stack_label("gcp-training-jobs", "dev") == {STACK_LABEL: "6b4b0796c6a882a2c801"}
    assert stack_label("gcp-training-jobs", "dev") != stack_label("other-project", "dev")
    assert stack_label("gcp-training-jobs", "dev") != stack_label("gcp-training-jobs", "prod")


# -- costUsd ------------------------------------------------------------------------------------------------

def test_cost_so_far_is_the_run_time_times_the_rate_and_a_read_updates_it(provider, emulator) -> None:
    emulator.state.set_phase_seconds(PHASE)
    outs = create(provider, props("ai-platform"))
    assert outs["costUsd"] == 0.0  # queued: nothing has run
    emulator.state.advance(2 * PHASE + 600)  # queued, preparing, then 10 minutes of running
    running = provider.read(outs["resourceName"], outs).outs
    assert running["state"] == "RUNNING"
    assert running["costUsd"] == round(T4_CLUSTER_USD_PER_HOUR / 6, 2) == 0.62
    emulator.state.advance(PHASE)  # it ends after 30 minutes of running
    done = provider.read(outs["resourceName"], running).outs
    assert done["state"] == "SUCCEEDED" and done["costUsd"] == round(T4_CLUSTER_USD_PER_HOUR / 2, 2) == 1.86
    emulator.state.advance(86400)
    assert provider.read(outs["resourceName"], done).outs["costUsd"] == 1.86  # an ended job costs no more


def test_a_spot_job_costs_at_spot_rates(provider, emulator) -> None:
    spec = {"workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                                 "acceleratorCount": 1}, "replicaCount": "1",
                                 "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"}}],
            "scheduling": {"strategy": "SPOT"}}
    emulator.state.set_phase_seconds(PHASE)
    outs = create(provider, props("vertex", {"jobSpec": spec, "region": "us-central1"}))
    emulator.state.advance(3 * PHASE)
    done = provider.read(outs["resourceName"], outs).outs
    # g2-standard-8 with its L4 at Spot rates: $0.607915641/h in the bundled table ($0.98/h on demand), 30 min
    assert done["costUsd"] == round(0.607915641 / 2, 2) == 0.30


def test_a_job_without_a_known_price_costs_unknown_never_a_guess() -> None:
    job = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "a3-ultragpu-8g"}, "replicaCount": "1"}]},
           "startTime": "2026-11-23T10:00:00Z", "endTime": "2026-11-23T11:00:00Z"}
    now = datetime(2026, 11, 24, tzinfo=UTC).timestamp()
    assert cost_usd(job, facts_of_body(job, region="us-central1"), now) is None


def test_run_time_counts_from_start_to_end_or_now_and_within_a_window() -> None:
    now = parse_time("2026-11-23T12:00:00Z")
    assert now is not None
    job = {"createTime": "2026-11-23T09:00:00Z", "startTime": "2026-11-23T10:00:00.500Z"}
    assert run_seconds(job, now) == 2 * 3600 - 0.5
    assert run_seconds({**job, "endTime": "2026-11-23T11:00:00.500Z"}, now) == 3600
    assert run_seconds(job, now, since=parse_time("2026-11-23T11:30:00Z")) == 1800
    assert run_seconds({"createTime": "2026-11-23T09:00:00Z"}, now) == 0  # never started
    assert run_seconds({**job, "endTime": "2026-11-23T11:00:00Z"}, now, since=now) == 0  # ended before the window


# -- a waiting up -------------------------------------------------------------------------------------------

def test_a_waited_failure_reports_its_states_its_last_line_every_minute_and_its_last_20_lines(
        provider, emulator, logged) -> None:
    fake = FakeClock(then=emulator.state.advance)
    fake.drive(provider)
    emulator.state.set_phase_seconds(100)  # queued, preparing, running: 100 s each, then it fails
    outs = create(provider, props("ai-platform", t4_job(**{"emulator-outcome": "failed"}), waitForCompletion=True))
    job_id = outs["jobId"]
    assert outs["state"] == "FAILED"
    states = [line.rsplit(": ", 1)[1] for line in logged["info"] if line.startswith(f"projects/my-proj/jobs/{job_id}:")]
    assert states == ["QUEUED", "PREPARING", "RUNNING", "FAILED"]
    reports = [line for line in logged["info"] if "last log line" in line]
    # polled at 0, 1, 3, 7, 15, 31, 61, 91, 121, ..., 271, 301 s: a report at the first poll a minute after the last
    assert [r.split(": last log line: ")[0] for r in reports] == [f"training job {job_id}"] * 4
    assert reports[0].endswith("INFO service Waiting for job to be provisioned.")  # at 61 s, queued
    assert reports[3].endswith("INFO worker-replica-1 step 4: loss=0.2000")  # at 241 s, 41 s into its run
    (error,) = logged["error"]
    head, _, tail = error.partition("\n")
    assert head == f"training job {job_id} FAILED: The replica master 0 exited with a non-zero status of 1."
    lines = tail.splitlines()
    assert lines[0] == f"its last {LAST_LINES} log lines:" and len(lines) == 1 + LAST_LINES
    assert [line.strip().split(" ", 3)[-1] for line in lines[-len(TRACEBACK) - 1:]] == \
        [*TRACEBACK, "The replica master 0 exited with a non-zero status of 1."]
    assert logged["warn"] == []


def test_a_log_that_cannot_be_read_is_said_once_and_never_fails_the_create(provider, emulator, logged) -> None:
    fake = FakeClock(then=emulator.state.advance)
    fake.drive(provider)
    emulator.state.set_phase_seconds(100)
    emulator.state.inject_faults(403, 100, "entries.list", message="Permission 'logging.logEntries.list' denied")
    outs = create(provider, props("vertex", t4_job(**{"emulator-outcome": "failed"}), waitForCompletion=True))
    assert outs["state"] == "FAILED"
    (warning,) = logged["warn"]
    assert warning == (f"training job {outs['jobId']}: cannot read its log: Cloud Logging (logging.googleapis.com) "
                       "entries.list: HTTP 403 PERMISSION_DENIED: Permission 'logging.logEntries.list' denied")
    (error,) = logged["error"]
    assert error == (f"training job {outs['jobId']} FAILED: The replica workerpool0-0 exited with a non-zero status "
                     "of 1. (its log could not be read; see the warning above)")
    assert len(emulator.state.requests("entries.list")) == 1  # tried once, then left alone
