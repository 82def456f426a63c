"""A job's log read through the project's Cloud Logging client (backends.cloud_logging) from the emulator over
real HTTP: gcloud's filter, every line, the last N, following until the job ends (each line once, on an injected
clock), and errors that name the API and its status."""

from __future__ import annotations

from typing import Any

import pytest

from gcp_training_jobs.backends.cloud_logging import LoggingError, Reader, job_filter, log_job_id
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.logging_v2 import STEP_SECONDS, TRACEBACK

PROJECT = "my-proj"
PHASE = 100.0
ERROR = "The replica master 0 exited with a non-zero status of 1."


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")


def ml_job(ml_client: Any, job_id: str, *, fail: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"jobId": job_id, "trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1", "pythonModule": "trainer.task",
        "packageUris": ["gs://b/t.tar.gz"]}}
    if fail:
        body["labels"] = {"emulator-outcome": "failed"}
    job: dict[str, Any] = ml_client.projects().jobs().create(parent=f"projects/{PROJECT}", body=body).execute()
    return job


def test_the_filter_is_gclouds_and_the_id_is_the_apis_own() -> None:
    assert job_filter("4000000000000000001") == \
        'resource.type="ml_job" AND resource.labels.job_id="4000000000000000001"'
    assert job_filter("gpu_1", "workerpool0-0") == ('resource.type="ml_job" AND resource.labels.job_id="gpu_1" AND '
                                                    'resource.labels.task_name="workerpool0-0"')
    assert log_job_id({"jobId": "gpu_1a2b3c4d"}) == "gpu_1a2b3c4d"
    assert log_job_id({"name": "projects/p/locations/us-central1/customJobs/4000000000000000001"}) == \
        "4000000000000000001"


def test_every_line_and_the_last_lines_of_a_failed_job(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    ml_job(ml_client, "gpu_1", fail=True)
    ml_job(ml_client, "other_1")  # another job's lines are not this one's
    emulator.state.advance(3 * PHASE + 1)
    reader = Reader(PROJECT, emulator.url)
    every = [line.message for line in reader.lines("gpu_1")]
    assert every[:3] == ["Waiting for job to be provisioned.", "Job is running.", "Running trainer.task"]
    assert every[-len(TRACEBACK) - 1:] == [*TRACEBACK, ERROR]
    assert len(every) == 3 + int(PHASE // STEP_SECONDS) + len(TRACEBACK) + 1
    last = reader.tail("gpu_1", 20)
    assert [line.message for line in last] == every[-20:]
    assert last[-1].text().endswith(f"ERROR service {ERROR}") and last[-2].task == "master-replica-0"
    assert reader.tail("gpu_1", 3, task="master-replica-0")[-1].message == TRACEBACK[-1]
    assert reader.tail("gpu_1", 0) == []


def test_a_multi_line_message_is_one_line_per_line(emulator: Emulator, ml_client: Any) -> None:
    ml_job(ml_client, "gpu_2")
    emulator.state.fail_job("gpu_2", "worker lost\ncheck the quota")
    lines = Reader(PROJECT, emulator.url).tail("gpu_2", 2)
    assert [line.message for line in lines] == ["worker lost", "check the quota"]
    assert lines[0].insert_id == lines[1].insert_id  # one entry


def test_follow_prints_each_line_once_until_the_job_has_ended(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    ml_job(ml_client, "gpu_3", fail=True)
    emulator.state.advance(2 * PHASE + 25)  # 25 s into its run
    slept: list[float] = []

    def sleep(seconds: float) -> None:  # the emulator's clock moves as the reader sleeps, never the real one
        slept.append(seconds)
        emulator.state.advance(seconds)

    def ended() -> bool:
        job = ml_client.projects().jobs().get(name=f"projects/{PROJECT}/jobs/gpu_3").execute()
        return job["state"] in ("SUCCEEDED", "FAILED", "CANCELLED")

    reader = Reader(PROJECT, emulator.url, sleep=sleep)
    shown = reader.tail("gpu_3", 2)
    followed = list(reader.follow("gpu_3", ended, poll_seconds=10, start=shown))
    every = reader.lines("gpu_3")
    assert [line.message for line in shown + followed] == [line.message for line in every[-len(shown + followed):]]
    assert shown + followed == every[len(every) - len(shown) - len(followed):]
    assert [line.message for line in followed[-len(TRACEBACK) - 1:]] == [*TRACEBACK, ERROR]
    assert slept == [10.0] * 8  # 25 s in, 100 s of run: it ends at 105 s, seen by the ninth look


def test_an_api_error_names_the_api_and_its_status(emulator: Emulator) -> None:
    emulator.state.inject_faults(403, 1, "entries.list", message="Permission denied on logging.entries.list")
    with pytest.raises(LoggingError) as caught:
        Reader(PROJECT, emulator.url).tail("gpu_1", 20)
    assert str(caught.value) == ("Cloud Logging (logging.googleapis.com) entries.list: HTTP 403 PERMISSION_DENIED: "
                                 "Permission denied on logging.entries.list")


def test_a_transient_error_is_retried(emulator: Emulator, ml_client: Any) -> None:
    ml_job(ml_client, "gpu_4")
    emulator.state.inject_faults(503, 2, "entries.list")
    assert [line.message for line in Reader(PROJECT, emulator.url, sleep=lambda _: None).lines("gpu_4")] == \
        ["Waiting for job to be provisioned."]
    assert len(emulator.state.requests("entries.list")) == 3


def test_no_answer_is_an_error_naming_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LoggingError, match=r"^Cloud Logging \(logging.googleapis.com\) entries.list: no answer from "
                                           r"http://127.0.0.1:9/"):
        Reader(PROJECT, "http://127.0.0.1:9/", sleep=lambda _: None).lines("gpu_1")
    with pytest.raises(LoggingError, match="refusing to send credentials: http://logs.example.com/ is not https://"):
        Reader(PROJECT, "http://logs.example.com/").lines("gpu_1")


def test_no_credentials_is_an_error_saying_how_to_get_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(LoggingError) as caught:
        Reader(PROJECT, "https://logging.googleapis.com/").lines("gpu_1")
    assert str(caught.value).startswith("Cloud Logging (logging.googleapis.com) entries.list: no Application Default "
                                        "Credentials for https://logging.googleapis.com/")
    assert "gcloud auth application-default login" in str(caught.value)
