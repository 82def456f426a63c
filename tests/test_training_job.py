"""The TrainingJob provider's methods called directly against the emulator over real HTTP, both backends.

Pulumi's mocks never call a dynamic provider, so its lifecycle is pinned here: check, diff, create, read,
update, delete, the fault paths (429/5xx, a create whose answer is lost) and the pickled provider.
"""

from __future__ import annotations

import base64
import copy
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import dill
import pytest
from pulumi.dynamic.dynamic import serialize_provider

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.lifecycle import JobConflict, Jobs, NotAJobName
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.training_job import UNKNOWN, TrainingJobProvider
from gcp_training_jobs.resources.training_job import provider as provider_module
from tests.helpers import FakeClock, as_container, checked, l4_spot, props, spec_props, t4_job

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["ai-platform", "vertex"]
CREATE = {"ai-platform": "jobs.create", "vertex": "customJobs.create"}


def created(provider: TrainingJobProvider, backend: str, job: dict[str, Any] | None = None) -> tuple[str, dict]:
    inputs = checked(provider, props(backend, job))
    result = provider.create(inputs)
    return result.id, dict(result.outs)


# -- check -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_each_new_job_gets_a_fresh_id_drawn_at_create_not_in_check(provider, backend) -> None:
    inputs = checked(provider, props(backend))
    assert "jobId" not in inputs  # drawn at create: an output, read back from the job made or adopted
    _, first = created(provider, backend)
    _, second = created(provider, backend, t4_job(count=4))
    for outs in (first, second):
        assert outs["jobId"].startswith("resnet_") and len(outs["jobId"]) == len("resnet_") + 8
    assert first["jobId"] != second["jobId"]


def test_check_refuses_a_missing_identity_and_wait_timeouts_that_are_not_seconds(provider) -> None:
    failures = provider.check({}, props("vertex", identity="", waitTimeoutSeconds=True)).failures
    assert [f.field for f in failures] == ["identity", "waitTimeoutSeconds"]
    assert "True is not a number of seconds" in failures[1].reason
    for bad in (float("inf"), float("nan"), 0, -5):
        (failure,) = provider.check({}, props("vertex", waitTimeoutSeconds=bad)).failures
        assert failure.field == "waitTimeoutSeconds" and "finite number of seconds > 0" in failure.reason


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_reports_every_problem_as_a_check_failure(provider, backend) -> None:
    job = t4_job(count=3)
    job["trainingInput"]["region"] = "us-east4"
    job["trainingInput"]["jobDir"] = "/tmp/out"
    failures = provider.check({}, props(backend, job)).failures
    three = "3 NVIDIA_TESLA_T4 on n1-standard-8; allowed: 1, 2, 4"
    # Every problem, each under its job.* property (the rules may name several fields in one problem).
    bad_dir = "'/tmp/out' is not a Cloud Storage URI: it does not start with gs://; allowed: gs://BUCKET/PATH"
    assert {f.message for f in failures} == {three, bad_dir}
    counts = " ".join(f.field for f in failures if f.message == three)
    assert counts.startswith("job.trainingInput.masterConfig.acceleratorConfig.count")
    assert "trainingInput.workerConfig.acceleratorConfig.count" in counts
    assert [f.field for f in failures if f.message == bad_dir] == ["job.trainingInput.jobDir"]


def test_check_applies_vertex_only_limits(provider) -> None:
    job = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "complex_model_s", "masterConfig": {},
                             "region": "us-central1", "runtimeVersion": "2.11", "pythonModule": "trainer.task",
                             "packageUris": ["gs://my-staging/trainer-abc.tar.gz"]}}
    assert provider.check({}, props("ai-platform", job)).failures == []
    (failure,) = provider.check({}, props("vertex", job)).failures
    assert failure.field == "job.trainingInput.masterType"
    assert "complex_model_s has no documented Compute Engine equivalent on Vertex AI" in failure.reason


def test_check_refuses_end_of_life_accelerators_on_either_backend(provider) -> None:
    """The fixed rule of plan and the policy pack, on AI Platform's own limits too; Vertex also names the fields."""
    job = t4_job()
    for cfg in ("masterConfig", "workerConfig"):
        job["trainingInput"][cfg]["acceleratorConfig"]["type"] = "NVIDIA_TESLA_K80"
    (failure,) = provider.check({}, props("ai-platform", job)).failures
    assert failure.field == "no-end-of-life-accelerators"
    assert failure.message.startswith("job resnet uses NVIDIA_TESLA_K80 (")
    assert "reached end of support on 2024-05-01" in failure.reason
    failures = provider.check({}, props("vertex", job)).failures
    named = " ".join(f.field for f in failures)  # the fields the rule names
    assert "trainingInput.masterConfig.acceleratorConfig.type" in named
    assert "trainingInput.workerConfig.acceleratorConfig.type" in named
    assert failures and all("NVIDIA_TESLA_K80 is not offered by Vertex AI" in f.reason for f in failures)


def test_check_skips_values_unknown_at_preview_and_judges_the_rest(provider) -> None:
    job = t4_job()
    job["trainingInput"]["packageUris"] = UNKNOWN
    job["trainingInput"]["jobDir"] = UNKNOWN
    assert provider.check({}, props("ai-platform", job)).failures == []
    job["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = "3"
    failures = provider.check({}, props("ai-platform", job)).failures
    assert [f.field for f in failures] == ["job.trainingInput.masterConfig.acceleratorConfig.count"]


def test_check_refuses_an_unknown_backend_and_a_missing_project(provider) -> None:
    failures = provider.check({}, props("sagemaker", project="")).failures
    assert [(f.field, f.message) for f in failures] == [
        ("backend", "'sagemaker'; allowed: ai-platform, vertex"),
        ("project", "required: the Google Cloud project id"),
    ]


def test_check_of_a_vertex_job_with_an_empty_project_names_the_project_and_reads_no_quota(provider) -> None:
    """The quota read needs a project: an empty one is the check's failure on `project`, never a crash in it."""
    failures = provider.check({}, spec_props(project="")).failures
    assert [(f.field, f.message) for f in failures] == [("project", "required: the Google Cloud project id")]


# -- diff --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_ignores_provider_float_and_order_noise(provider, backend) -> None:
    olds = {**checked(provider, props(backend)), "__provider": "old-pickle", "state": "RUNNING"}
    news = copy.deepcopy(olds)
    news["__provider"] = "new-pickle"
    news["job"]["trainingInput"]["workerCount"] = 2.0
    news["job"]["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = 2
    news["job"]["trainingInput"] = dict(reversed(list(news["job"]["trainingInput"].items())))
    result = provider.diff("id", olds, news)
    assert result.changes is False and result.replaces == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_state_pickled_under_another_provider_path_is_updated_in_place_once(provider, backend) -> None:
    """The engine deletes and reads a job with the provider its outputs pickle; a `same` step keeps those outputs,
    so a state whose pickle names another path (written before the provider's path moved) is updated in place (no
    replacement), which writes this path; a state pickled as this tree pickles is no change."""
    current = serialize_provider(TrainingJobProvider())
    elsewhere = base64.b64encode(b"cearlier.resources.job_provider\nTrainingJobProvider\n.").decode()
    news = {**checked(provider, props(backend)), "__provider": current}
    same = provider.diff("id", {**news, "state": "RUNNING"}, news)
    assert (same.changes, same.replaces) == (False, [])
    moved = provider.diff("id", {**news, "__provider": elsewhere, "state": "RUNNING"}, news)
    assert (moved.changes, moved.replaces) == (True, [])
    # the package's state, moved back by TrainingJob's alias to its type: no pickle at all, updated in place too
    back = provider.diff("id", {k: v for k, v in {**news, "state": "RUNNING"}.items() if k != "__provider"}, news)
    assert (back.changes, back.replaces) == (True, [])
    # the package's own calls carry no pickle on either side: no change
    unpickled = {k: v for k, v in news.items() if k != "__provider"}
    assert provider.diff("id", {**unpickled, "state": "RUNNING"}, unpickled).changes is False


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_of_an_id_that_names_no_job_reads_nothing_and_keeps_the_job(provider, emulator, backend) -> None:
    """A state whose id is not one of the API's job names (NotAJobName) is kept as last known, with no request."""
    olds = {**checked(provider, props(backend)), "state": "RUNNING"}
    before = len(emulator.state.requests())
    assert provider.diff("id", olds, olds).replaces == []
    assert emulator.state.requests()[before:] == []
    with pytest.raises(NotAJobName, match="'id' is not the name of a vertex job"):
        Jobs(VertexBackend(), Target("my-proj", "us-central1", emulator.url)).get("id")


def test_a_fault_in_reading_a_job_that_is_no_api_answer_is_raised_not_read_as_could_not_read(
        provider, emulator, monkeypatch) -> None:
    """Only the API's and the transport's failures (and the project's own NotAJobName) keep a job as last known: a
    TypeError is a fault of the code, raised."""
    id_, outs = created(provider, "vertex")

    def broken(self: VertexBackend, svc: Any, name: str) -> Any:
        raise TypeError("a fault of the code")

    monkeypatch.setattr(VertexBackend, "get_request", broken)
    with pytest.raises(TypeError, match="a fault of the code"):
        provider.diff(id_, {**outs, "state": "FAILED"}, checked(provider, props("vertex")))


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_replaces_on_any_spec_change_and_names_what_changed(provider, backend) -> None:
    olds = checked(provider, props(backend))
    news = checked(provider, props(backend, t4_job(count=4)), olds=olds)
    result = provider.diff("id", olds, news)
    assert result.changes is True
    assert result.replaces == ["job"]
    assert result.delete_before_replace is False


def test_diff_label_change_updates_in_place_on_ml_and_replaces_on_vertex(provider) -> None:
    olds = checked(provider, props("ai-platform"))
    news = checked(provider, props("ai-platform", t4_job(team="b")), olds=olds)
    result = provider.diff("id", olds, news)
    assert (result.changes, result.replaces) == (True, [])
    vold = checked(provider, props("vertex"))
    vnew = checked(provider, props("vertex", t4_job(team="b")), olds=vold)
    assert provider.diff("id", vold, vnew).replaces == ["job"]


# -- create ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_create_sends_one_request_and_records_the_outputs(provider, emulator, backend) -> None:
    id_, outs = created(provider, backend)
    listing = CREATE[backend].replace("create", "list")  # the lookup of a live job left by a dead run
    # check's quota read (Vertex AI's quotas), and what the region's live jobs hold, read once per run (a live job of
    # this resource, left by a run that died, is counted once, as live)
    quota = ["quotaInfos.list", "customJobs.list", "hyperparameterTuningJobs.list"] if backend == "vertex" else []
    assert [r["method"] for r in emulator.state.requests()] == [*quota, listing, CREATE[backend]]
    assert outs["state"] == "QUEUED"
    assert outs["resourceName"] == id_
    assert outs["consoleUrl"].startswith("https://console.cloud.google.com/")
    assert outs["createTime"]
    (job,) = emulator.state.jobs()
    body = job["job"]
    labels = body["labels"]
    assert labels["pulumi-job"] == outs["jobId"]
    assert set(labels) == {"pulumi-job", "pulumi-resource", "pulumi-spec", "pulumi-stack"}
    if backend == "ai-platform":
        assert id_ == f"projects/my-proj/jobs/{outs['jobId']}"
        assert body["trainingInput"]["masterConfig"]["acceleratorConfig"] == {"type": "NVIDIA_TESLA_T4", "count": "2"}
    else:
        assert id_.startswith("projects/my-proj/locations/us-central1/customJobs/")
        pools = body["jobSpec"]["workerPoolSpecs"]
        assert [p["replicaCount"] for p in pools] == ["1", "2"]
        assert pools[0]["machineSpec"] == {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                                           "acceleratorCount": 2}


@pytest.mark.parametrize("backend", BACKENDS)
def test_create_retries_throttling_without_a_second_job(provider, emulator, backend):
    emulator.state.inject_faults(status=429, count=2, method=CREATE[backend])
    created(provider, backend)
    assert len(emulator.state.jobs()) == 1
    assert len(emulator.state.requests(CREATE[backend])) == 3


@pytest.mark.parametrize("status", [500, 503])
def test_an_ml_create_answered_5xx_is_looked_up_by_id_then_resent_under_the_same_id(provider, emulator, status):
    emulator.state.inject_faults(status=status, count=2, method="jobs.create")
    created(provider, "ai-platform")
    assert len(emulator.state.jobs()) == 1
    assert len(emulator.state.requests("jobs.create")) == 3
    assert len(emulator.state.requests("jobs.get")) == 2  # each unknown outcome was looked up first
    ids = {r["path"].rsplit("/", 1)[-1] for r in emulator.state.requests("jobs.get")}
    assert len(ids) == 1  # one id throughout: a re-send could only have met a 409


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lost_create_answer_is_reconciled_not_repeated(provider, emulator, backend) -> None:
    emulator.state.drop_next_response(method=CREATE[backend])
    id_, outs = created(provider, backend)
    (job,) = emulator.state.jobs()
    assert job["name"] == id_
    assert len(emulator.state.requests(CREATE[backend])) == 1
    assert outs["state"] == "QUEUED"


def test_an_id_taken_by_another_spec_is_a_clear_conflict(provider, emulator, monkeypatch) -> None:
    monkeypatch.setattr("gcp_training_jobs.resources.job_model.inputs.secrets.token_hex", lambda _: "c0ffee00")
    inputs = checked(provider, props("ai-platform"))
    other = copy.deepcopy(inputs)
    other["job"]["trainingInput"]["workerCount"] = "5"
    provider.create(other)
    with pytest.raises(JobConflict, match="already exists in project my-proj with a different spec"):
        provider.create(inputs)
    assert len(emulator.state.jobs()) == 1


def test_an_id_already_holding_our_job_is_adopted(provider, emulator) -> None:
    inputs = checked(provider, props("ai-platform"))
    first = provider.create(inputs)
    again = provider.create(inputs)
    assert again.id == first.id and len(emulator.state.jobs()) == 1


def test_errors_that_are_not_retryable_surface_with_googles_message(provider, emulator) -> None:
    emulator.state.inject_faults(status=403, count=1, method="jobs.create")
    with pytest.raises(transport.ApiError, match="HTTP 403"):
        created(provider, "ai-platform")
    assert emulator.state.jobs() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_wait_for_completion_polls_until_the_job_finishes(provider, emulator, backend) -> None:
    emulator.state.set_phase_seconds(0)
    inputs = checked(provider, props(backend, waitForCompletion=True, waitTimeoutSeconds=30))
    outs = provider.create(inputs).outs
    assert outs["state"] == "SUCCEEDED"
    assert outs["endTime"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_wait_for_completion_polls_on_the_providers_clock(provider, emulator, backend) -> None:
    """The wait's polls and sleeps run on the clock the provider is given: the job moves only as it sleeps."""
    fake = FakeClock(then=emulator.state.advance)
    fake.drive(provider)
    emulator.state.set_phase_seconds(60)  # three phases of 60 s each (queued, preparing, running), then done
    inputs = checked(provider, props(backend, waitForCompletion=True, waitTimeoutSeconds=3600))
    outs = provider.create(inputs).outs
    assert outs["state"] == "SUCCEEDED" and outs["endTime"]
    assert fake.sleeps == [1, 2, 4, 8, 16, 30, 30, 30, 30, 30]  # backoff from 1 s, capped at 30 s: done at 181 s
    get = CREATE[backend].split(".")[0] + ".get"
    assert len(emulator.state.requests(get)) == len(fake.sleeps) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_wait_for_completion_gives_up_at_its_timeout_by_the_providers_clock(provider, emulator, monkeypatch,
                                                                            backend) -> None:
    warned: list[str] = []
    monkeypatch.setattr("gcp_training_jobs.resources.training_job.pulumi.log.warn", warned.append)
    fake = FakeClock()
    fake.drive(provider)
    inputs = checked(provider, props(backend, waitForCompletion=True, waitTimeoutSeconds=100))
    outs = provider.create(inputs).outs  # the job stays queued (phases frozen)
    assert outs["state"] == "QUEUED"
    assert fake.sleeps == [1, 2, 4, 8, 16, 30, 30, 9] and fake.now == 100  # the last sleep ends at the deadline
    (warning,) = [line for line in warned if "after 100s" in line]  # one, about the wait
    assert f"training job {outs['jobId']} still QUEUED after 100s" in warning


def test_a_waiting_up_stops_at_a_paused_job_and_says_so(provider, emulator, monkeypatch) -> None:
    """Vertex AI's JOB_STATE_PAUSED waits for someone to resume it: the wait ends there (as the Vertex SDK's does),
    the job is recorded PAUSED with a warning, and it is still the resource's job (adopted, not made again)."""
    warned: list[str] = []
    monkeypatch.setattr("gcp_training_jobs.resources.training_job.pulumi.log.warn", warned.append)

    def pause_once_started(seconds: float) -> None:
        emulator.state.advance(seconds)
        (job,) = emulator.state.jobs()
        if job["job"]["state"] in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING"):
            control_pause(emulator, job["name"])

    fake = FakeClock(then=pause_once_started)
    fake.drive(provider)
    emulator.state.set_phase_seconds(10)
    outs = provider.create(checked(provider, props("vertex", waitForCompletion=True, waitTimeoutSeconds=3600))).outs
    assert outs["state"] == "PAUSED" and sum(fake.sleeps) < 60  # not the hour of its timeout
    (warning,) = [line for line in warned if "PAUSED" in line]
    assert f"training job {outs['jobId']} is PAUSED: stopped waiting" in warning
    again = provider.create(checked(provider, props("vertex"))).outs  # a second up: the paused job is adopted
    assert again["resourceName"] == outs["resourceName"] and len(emulator.state.jobs()) == 1
    provider.delete(outs["resourceName"], outs)  # destroy cancels it
    assert emulator.state.jobs()[0]["job"]["state"] == "JOB_STATE_CANCELLED"


def control_pause(emulator: Emulator, job: str) -> Any:
    """POST /_emulator/pause over HTTP, as a test outside the emulator's process would."""
    import json
    import urllib.request

    request = urllib.request.Request(f"{emulator.url}_emulator/pause", data=json.dumps({"job": job}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_job_is_recorded_with_its_error_message(provider, emulator, backend) -> None:
    emulator.state.set_phase_seconds(0)
    inputs = checked(provider, props(backend, t4_job(**{"emulator-outcome": "failed"}), waitForCompletion=True))
    outs = provider.create(inputs).outs
    assert outs["state"] == "FAILED"
    assert outs["errorMessage"]


# -- read, update, delete ----------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_read_reports_state_and_a_vanished_job_as_gone(provider, emulator, backend) -> None:
    id_, outs = created(provider, backend)
    emulator.state.set_phase_seconds(0)
    read = provider.read(id_, outs)
    assert read.id == id_
    assert read.outs["state"] == "SUCCEEDED" and read.outs["endTime"]
    assert read.outs["job"] == outs["job"]
    assert len(emulator.state.requests(CREATE[backend].split(".")[0] + ".get")) == 1
    gone = provider.read(id_.rsplit("/", 1)[0] + "/nope_123", outs)
    assert gone.id == ""


def test_update_patches_labels_and_returns_every_output(provider, emulator) -> None:
    id_, outs = created(provider, "ai-platform")
    news = checked(provider, props("ai-platform", t4_job(team="vision")), olds=outs)
    result = provider.update(id_, outs, news)
    assert result.outs["jobId"] == outs["jobId"]
    for key in ("state", "consoleUrl", "createTime", "resourceName"):
        assert result.outs[key], key
    (job,) = emulator.state.jobs()
    labels = job["job"]["labels"]
    assert {k: v for k, v in labels.items() if k in ("team", "pulumi-job")} == {"team": "vision",
                                                                                "pulumi-job": outs["jobId"]}
    assert set(labels) == {"team", "pulumi-job", "pulumi-resource", "pulumi-spec", "pulumi-stack"}  # identity stays


@pytest.mark.parametrize("backend", BACKENDS)
def test_delete_cancels_a_running_job_with_two_requests(provider, emulator, backend) -> None:
    id_, outs = created(provider, backend)
    emulator.state.reset_log() if hasattr(emulator.state, "reset_log") else None
    before = len(emulator.state.requests())
    provider.delete(id_, outs)
    calls = [r["method"].split(".")[1] for r in emulator.state.requests()[before:]]
    assert calls == ["get", "cancel"]
    (job,) = emulator.state.jobs()
    assert job["job"]["state"] in ("CANCELLED", "JOB_STATE_CANCELLED")


def test_delete_leaves_every_finished_job_record(provider, emulator) -> None:
    """A finished job is its history (status --all, spend, its console page and logs): a delete keeps its record."""
    emulator.state.set_phase_seconds(0)
    ml_id, ml_outs = created(provider, "ai-platform")
    v_id, v_outs = created(provider, "vertex")
    before = len(emulator.state.requests())
    provider.delete(ml_id, ml_outs)
    provider.delete(v_id, v_outs)
    assert sorted(j["name"] for j in emulator.state.jobs()) == sorted([ml_id, v_id])
    assert [r["method"].split(".")[1] for r in emulator.state.requests()[before:]] == ["get", "get"]


def test_delete_record_on_delete_removes_a_finished_vertex_job_record_only(provider, emulator) -> None:
    """The opt-in: a finished Vertex AI job's record goes with its resource; ml v1 has no delete: its record stays."""
    emulator.state.set_phase_seconds(0)
    ml_id, ml_outs = created(provider, "ai-platform")
    v_id, v_outs = created(provider, "vertex")
    provider.delete(ml_id, {**ml_outs, "deleteRecordOnDelete": True})
    provider.delete(v_id, {**v_outs, "deleteRecordOnDelete": True})
    assert [j["name"] for j in emulator.state.jobs()] == [ml_id]


def test_delete_record_on_delete_is_judged_at_check(provider) -> None:
    result = provider.check({}, {**props("vertex", t4_job()), "deleteRecordOnDelete": "yes"})
    assert [(f.field, f.message) for f in result.failures] == [("deleteRecordOnDelete", "'yes'; allowed: true, "
                                                                                           "false")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_delete_of_a_job_already_gone_is_fine(provider, emulator, backend) -> None:
    """A job deleted outside Pulumi: delete asks Google, finds nothing to cancel, raises nothing, makes nothing."""
    id_, outs = created(provider, backend)
    emulator.state.reset()
    provider.delete(id_, outs)
    asked = [r["method"] for r in emulator.state.requests()]
    assert asked, "delete asked Google nothing"
    assert CREATE[backend] not in asked and not any(m.endswith(".cancel") for m in asked), asked
    assert emulator.state.jobs() == []


def test_endpoint_comes_from_stack_config_in_configure(emulator, monkeypatch) -> None:
    from pulumi.dynamic import Config, ConfigureRequest

    monkeypatch.delenv("GCP_TRAINING_JOBS_API_ENDPOINT", raising=False)
    p = TrainingJobProvider()
    p.configure(ConfigureRequest(Config({"gcp-training-jobs:apiEndpoint": emulator.url}, "gcp-training-jobs")))
    assert p.endpoint == emulator.url
    p.create(checked(p, props("ai-platform")))
    assert len(emulator.state.jobs()) == 1


# -- the pickled provider ----------------------------------------------------------------------------

@pytest.mark.slow
def test_pickled_provider_is_small_holds_no_credentials_and_works_in_a_fresh_process(provider, emulator):
    created(provider, "ai-platform")  # a used provider: clients and credentials exist in this process
    blob = serialize_provider(provider)
    raw = base64.b64decode(blob)
    print(f"pickled provider: {len(raw)} bytes")
    assert len(raw) < 4096
    for needle in (b"Credentials", b"httplib2", b"token", b"Http", emulator.url.encode(), b"monotonic", b"sleep"):
        assert needle not in raw, needle
    assert vars(dill.loads(raw)) == vars(provider) == {"endpoint": None}  # the lifecycle's clock is the class's
    assert dill.loads(raw).__class__ is TrainingJobProvider
    script = (
        "import base64, os, sys, dill\n"
        "p = dill.loads(base64.b64decode(sys.argv[1]))\n"  # imported by the pickle's own path, as the engine does
        "from gcp_training_jobs.resources.training_job.provider import TrainingJobProvider\n"
        "assert type(p) is TrainingJobProvider, type(p)\n"
        "inputs = p.check({}, {'name': 'fresh', 'project': 'my-proj', 'backend': 'vertex', 'identity': 'o/p/s/f', "
        f"'job': {as_container(t4_job())!r}}}).inputs\n"
        "print(p.create(inputs).outs['state'])\n"
    )
    env = {"GCP_TRAINING_JOBS_API_ENDPOINT": emulator.url, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script, blob], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "QUEUED"


def test_every_job_shares_one_configured_provider_that_no_call_writes_to() -> None:
    """The engine's dynamic-provider process keeps one configured provider per pickle (pulumi/dynamic/__main__.py,
    get_provider) and calls it from several threads; every TrainingJob pickles to the same bytes, so every job of a
    stack is served by one instance. So nothing a call does may live on it: after `configure`, no method writes
    to the provider (what a run shares lives in backends/run_cache.RUN, behind its lock)."""
    assert serialize_provider(TrainingJobProvider()) == serialize_provider(TrainingJobProvider())


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_provider_method_writes_to_the_configured_provider(emulator, monkeypatch, backend) -> None:
    from pulumi.dynamic import Config, ConfigureRequest

    monkeypatch.delenv("GCP_TRAINING_JOBS_API_ENDPOINT", raising=False)
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")
    shared = TrainingJobProvider()
    shared.configure(ConfigureRequest(Config({"gcp-training-jobs:apiEndpoint": emulator.url,
                                              "gcp-training-jobs:jobs": '{"resnet": {}}'}, "gcp-training-jobs")))
    configured = copy.deepcopy(vars(shared))
    assert configured == {"endpoint": emulator.url, "stack_jobs": frozenset({"resnet"}), "stack_config": (
        ("gcp-training-jobs:apiEndpoint", emulator.url), ("gcp-training-jobs:jobs", '{"resnet": {}}'))}
    emulator.state.set_phase_seconds(0)
    olds = checked(shared, props(backend))
    created = shared.create({**olds, "waitForCompletion": True})
    relabelled = t4_job(team="vision") if backend == "ai-platform" else t4_job()  # Vertex replaces on labels
    news = checked(shared, props(backend, relabelled, protect=True), olds=dict(created.outs))
    shared.diff(created.id, dict(created.outs), news)
    shared.read(created.id, dict(created.outs))
    updated = shared.update(created.id, dict(created.outs), news)
    shared.delete(created.id, dict(updated.outs))
    assert shared.check({}, {**props(backend), "retries": "three"}).failures  # a refusal writes nothing either
    assert vars(shared) == configured


# -- a job in Vertex AI's own vocabulary (jobs.NAME.jobSpec) ------------------------------------------

def test_a_job_spec_is_created_as_given_on_spot_read_and_cancelled(provider, emulator) -> None:
    inputs = checked(provider, spec_props(l4_spot(team="vision")))
    outs = provider.create(inputs).outs
    assert outs["resourceName"].startswith("projects/my-proj/locations/us-central1/customJobs/")
    (job,) = emulator.state.jobs()
    body = job["job"]
    assert body["jobSpec"]["scheduling"] == {"strategy": "SPOT", "timeout": "7200s"}
    assert body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    assert body["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://my-job-dir/jobs/l4"}
    assert body["labels"]["team"] == "vision" and body["displayName"] == outs["jobId"]
    assert set(body["labels"]) == {"team", "pulumi-job", "pulumi-resource", "pulumi-spec", "pulumi-stack"}
    assert provider.read(outs["resourceName"], outs).outs["state"] == "QUEUED"
    provider.delete(outs["resourceName"], outs)
    assert emulator.state.jobs()[0]["job"]["state"] in ("JOB_STATE_CANCELLED", "CANCELLED")


def test_a_live_job_spec_job_is_adopted_by_its_identity_labels(provider, emulator) -> None:
    inputs = checked(provider, spec_props())
    first = provider.create(inputs)
    again = provider.create(inputs)  # a run that died after its create reached Google
    assert again.id == first.id and len(emulator.state.jobs()) == 1
    other = checked(provider, spec_props(l4_spot(count=2, machine="g2-standard-24")))
    assert provider.create(other).id != first.id, "a replacement never adopts the job it replaces"


def test_check_names_job_spec_problems_at_their_path_and_refuses_it_on_ai_platform(provider) -> None:
    failures = provider.check({}, spec_props(l4_spot(count=3))).failures
    assert [f.field for f in failures] == ["job.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"]
    far = l4_spot()
    far["region"] = "northamerica-northeast1"
    (failure,) = provider.check({}, spec_props(far)).failures
    assert failure.field == "job.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"
    assert "not offered for training in northamerica-northeast1" in failure.reason
    (failure,) = provider.check({}, spec_props(backend="ai-platform")).failures
    assert failure.field == "job.jobSpec" and "runs on Vertex AI only" in failure.reason


def test_check_judges_a_job_spec_whose_output_dir_is_unknown_at_preview(provider) -> None:
    job = l4_spot()
    job["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] = UNKNOWN
    job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] = [UNKNOWN]
    assert provider.check({}, spec_props(job)).failures == []
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 3
    assert [f.field for f in provider.check({}, spec_props(job)).failures] == \
        ["job.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"]


def test_diff_of_a_job_spec_ignores_int64_and_float_noise_and_replaces_on_a_change(provider) -> None:
    olds = {**checked(provider, spec_props()), "state": "SUCCEEDED"}
    news = copy.deepcopy(olds)
    pool = news["job"]["jobSpec"]["workerPoolSpecs"][0]
    pool["replicaCount"], pool["machineSpec"]["acceleratorCount"] = 1.0, 1.0  # as Pulumi may hand them back
    news["job"]["jobSpec"] = dict(reversed(list(news["job"]["jobSpec"].items())))
    assert provider.diff("id", olds, news).changes is False
    spot_off = copy.deepcopy(olds)
    spot_off["job"]["jobSpec"]["scheduling"]["strategy"] = "STANDARD"
    assert provider.diff("id", olds, spot_off).replaces == ["job"]
    moved = copy.deepcopy(olds)
    moved["job"]["region"] = "us-east4"
    assert provider.diff("id", olds, moved).replaces == ["job"]
    relabelled = checked(provider, spec_props(l4_spot(team="b")))
    assert provider.diff("id", olds, relabelled).replaces == ["job"], "Vertex AI jobs cannot be relabelled"


def test_check_of_a_job_wholly_unknown_at_preview_waits_for_its_value(provider) -> None:
    """A secret job holding Outputs is one unknown value at preview: nothing to judge yet, nothing refused."""
    assert provider.check({}, {**props("vertex"), "job": UNKNOWN}).failures == []



def test_the_pickled_provider_names_only_the_module_of_its_class() -> None:
    """The state holds the provider as Pulumi's SDK pickles it (by reference): the only module it names is
    job_provider's, so other modules can be renamed without breaking existing states."""
    data = base64.b64decode(serialize_provider(TrainingJobProvider()))
    assert set(re.findall(rb"(?:gcp_training_jobs|components)(?:\.\w+)+", data)) == {
        b"gcp_training_jobs.resources.job_provider"}
    # what every state deployed since the rename holds, and what every earlier state holds (the class by the path
    # it had before the library was gcp_training_jobs, kept in this checkout by components/resources/job_provider.py)
    # are the class that lives in the package now
    new_state = b"cgcp_training_jobs.resources.job_provider\nTrainingJobProvider\n."
    old_state = b"ccomponents.resources.job_provider\nTrainingJobProvider\n."
    assert pickle.loads(new_state) is pickle.loads(old_state) is provider_module.TrainingJobProvider \
        is TrainingJobProvider


def test_the_job_models_unknown_is_the_pulumi_sdks() -> None:
    """job_model.inputs spells the engine's unknown itself, so that reading inputs loads no Pulumi."""
    from pulumi.runtime import rpc

    from gcp_training_jobs.resources.job_model import inputs

    assert inputs.UNKNOWN == rpc.UNKNOWN == UNKNOWN


@pytest.mark.slow
def test_the_job_model_loads_no_pulumi() -> None:
    """The inputs, identity and runs of a job are read by the command line and the policy pack without Pulumi."""
    script = ("import sys\n"
              "import gcp_training_jobs.resources.job_model.inputs, gcp_training_jobs.resources.job_model.identity\n"
              "import gcp_training_jobs.resources.job_model.runs\n"
              "print('PULUMI', sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp')))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "PULUMI []" in done.stdout
