"""The loopback emulator, driven only through Google's own client (plus its /_emulator/ control API).

Also the discovery-schema checker it validates bodies with. Nothing is timed: retries' back-off sleeps are
captured instead of slept, and an injected delay is held until the test lets it go (`held_delays`).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from googleapiclient.errors import HttpError  # noqa: E402

from gcp_training_jobs.emulator import Emulator, discovery, project_number  # noqa: E402

pytest.register_assert_rewrite("tests.conftest_emulator")  # it is also loaded as a plugin below
from tests.conftest_emulator import HeldDelays, build_client  # noqa: E402

#: Fixtures: emulator (clean state, frozen phases), emulator_server, ml_client, vertex_client, held_delays.
pytest_plugins = ["tests.conftest_emulator"]

PROJECT = "demo-project"
PARENT = f"projects/{PROJECT}"
REGION = "us-central1"
VX_PARENT = f"projects/{PROJECT}/locations/{REGION}"
RFC3339_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def ml_body(job_id: str = "train_1", **training: Any) -> dict[str, Any]:
    """An ml v1 Job like the AI Platform Training guides' (int64 fields as strings, as the project sends them)."""
    training_input: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
        "workerType": "n1-standard-8",
        "workerCount": "2",
        "workerConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
        "region": REGION,
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": ["gs://demo-bucket/trainer-0.1.tar.gz"],
        "args": ["--epochs", "10"],
        "jobDir": "gs://demo-bucket/out",
        "scheduling": {"maxRunningTime": "7200s"},
    }
    training_input.update(training)
    return {"jobId": job_id, "labels": {"team": "vision"}, "trainingInput": training_input}


def vertex_body(display_name: str = "train-1", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Vertex CustomJob with a chief pool (python package) and a worker pool (container)."""
    return {
        "displayName": display_name,
        "labels": labels if labels is not None else {"team": "vision"},
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {
                        "machineType": "n1-standard-8",
                        "acceleratorType": "NVIDIA_TESLA_T4",
                        "acceleratorCount": 1,
                    },
                    "replicaCount": "1",
                    "pythonPackageSpec": {
                        "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                        "packageUris": ["gs://demo-bucket/trainer-0.1.tar.gz"],
                        "pythonModule": "trainer.task",
                        "args": ["--epochs", "10"],
                    },
                },
                {
                    "machineSpec": {"machineType": "n1-standard-8"},
                    "replicaCount": "2",
                    "containerSpec": {"imageUri": "gcr.io/demo-project/trainer:1"},
                },
            ],
            "scheduling": {"timeout": "7200s"},
        },
    }


def api_error(call: Any) -> tuple[int, dict[str, Any]]:
    """Execute a googleapiclient request expected to fail; return (HTTP status, error JSON object)."""
    with pytest.raises(HttpError) as caught:
        call.execute()
    error = caught.value
    payload = json.loads(error.content)["error"]
    assert payload["code"] == error.status_code
    return error.status_code, payload


def control(emu: Emulator, path: str, body: Any = None, method: str | None = None) -> tuple[int, Any]:
    """Call the emulator's HTTP API with urllib; return (status, JSON)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(emu.url + path.lstrip("/"), data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        assert error.headers["Content-Type"].startswith("application/json")
        return error.code, json.loads(error.read())


def create_ml(client: Any, job_id: str = "train_1", **kw: Any) -> dict[str, Any]:
    job: dict[str, Any] = client.projects().jobs().create(parent=PARENT, body=ml_body(job_id, **kw)).execute()
    return job


def get_ml(client: Any, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = client.projects().jobs().get(name=f"{PARENT}/jobs/{job_id}").execute()
    return job


def customjobs(client: Any) -> Any:
    return client.projects().locations().customJobs()


# ------------------------------------------------------------------------------------------ ml v1


def test_get_config_is_stable_per_project(emulator: Emulator, ml_client: Any) -> None:
    config = ml_client.projects().getConfig(name=PARENT).execute()
    number = config["serviceAccountProject"]
    assert re.fullmatch(r"[1-9]\d{11}", number)
    assert number == project_number(PROJECT)
    assert config == {
        "serviceAccount": f"service-{number}@cloud-ml.google.com.iam.gserviceaccount.com",
        "serviceAccountProject": number,
        "config": {"tpuServiceAccount": f"service-{number}@cloud-tpu.iam.gserviceaccount.com"},
    }
    assert ml_client.projects().getConfig(name=PARENT).execute() == config
    other = ml_client.projects().getConfig(name="projects/other-project").execute()
    assert other["serviceAccountProject"] != number
    assert emulator.state.requests()[0] == {
        "method": "projects.getConfig",
        "http": "GET",
        "path": f"/v1/{PARENT}:getConfig",
        "query": {"alt": "json"},
    }


def test_ml_create_echoes_input_and_ignores_output_only_fields(emulator: Emulator, ml_client: Any) -> None:
    sent = ml_body("echo_1")
    forged = {**sent, "state": "SUCCEEDED", "createTime": "2001-01-01T00:00:00Z", "errorMessage": "x"}
    created = ml_client.projects().jobs().create(parent=PARENT, body=forged).execute()
    assert created["jobId"] == "echo_1"
    assert created["labels"] == sent["labels"]
    assert created["trainingInput"] == sent["trainingInput"]
    assert created["state"] == "QUEUED"
    assert RFC3339_Z.match(created["createTime"]) and not created["createTime"].startswith("2001")
    assert "errorMessage" not in created and "startTime" not in created and "endTime" not in created
    assert len(base64.b64decode(created["etag"])) == 8
    assert get_ml(ml_client, "echo_1") == created


def test_ml_list_filters_and_pages(emulator: Emulator, ml_client: Any) -> None:
    for index in range(5):
        team = "a" if index % 2 == 0 else "b"
        body = ml_body(f"job_{index}")
        body["labels"] = {"team": team, "emulator-outcome": "failed" if index == 4 else "ok"}
        ml_client.projects().jobs().create(parent=PARENT, body=body).execute()
    create_ml(ml_client, "elsewhere")  # same labels as ml_body's default
    ml_client.projects().jobs().create(parent="projects/other", body=ml_body("job_0")).execute()

    jobs = ml_client.projects().jobs()
    ids: list[str] = []
    token = None
    pages = 0
    while True:
        page = jobs.list(parent=PARENT, pageSize=2, pageToken=token).execute()
        ids += [j["jobId"] for j in page["jobs"]]
        pages += 1
        token = page.get("nextPageToken")
        if not token:
            break
    assert ids == ["elsewhere", "job_4", "job_3", "job_2", "job_1", "job_0"]  # newest first
    assert pages == 3

    by_label = jobs.list(parent=PARENT, filter='labels.team="a"').execute()
    assert [j["jobId"] for j in by_label["jobs"]] == ["job_4", "job_2", "job_0"]
    unquoted = jobs.list(parent=PARENT, filter="labels.team=a AND labels.emulator-outcome=ok").execute()
    assert [j["jobId"] for j in unquoted["jobs"]] == ["job_2", "job_0"]
    assert jobs.list(parent=PARENT, filter="state=RUNNING").execute() == {}
    assert len(jobs.list(parent=PARENT, filter="state=QUEUED").execute()["jobs"]) == 6

    emulator.state.set_phase_seconds(0)
    failed = jobs.list(parent=PARENT, filter='state=FAILED AND labels.team="a"').execute()
    assert [j["jobId"] for j in failed["jobs"]] == ["job_4"]
    assert [j["jobId"] for j in jobs.list(parent=PARENT, filter="jobId:job_*").execute()["jobs"]] == [
        "job_4", "job_3", "job_2", "job_1", "job_0"
    ]

    status, error = api_error(jobs.list(parent=PARENT, filter="labels.team=a OR state=RUNNING"))
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    status, error = api_error(jobs.list(parent=PARENT, pageToken="not-a-token"))
    assert status == 400


def test_ml_patch_labels_with_etag(emulator: Emulator, ml_client: Any) -> None:
    created = create_ml(ml_client, "patch_me")
    jobs = ml_client.projects().jobs()
    name = f"{PARENT}/jobs/patch_me"
    new_labels = {"team": "nlp", "stage": "b"}
    patched = jobs.patch(
        name=name, updateMask="labels", body={"labels": new_labels, "etag": created["etag"]}
    ).execute()
    assert patched["labels"] == {"team": "nlp", "stage": "b"}
    assert patched["etag"] != created["etag"]
    assert patched["trainingInput"] == created["trainingInput"]
    assert get_ml(ml_client, "patch_me") == patched

    status, error = api_error(
        jobs.patch(name=name, updateMask="labels", body={"labels": {"team": "x"}, "etag": created["etag"]})
    )
    assert (status, error["status"]) == (409, "ABORTED")
    assert "etag mismatch" in error["message"]
    assert get_ml(ml_client, "patch_me")["labels"] == {"team": "nlp", "stage": "b"}

    status, error = api_error(
        jobs.patch(name=name, updateMask="trainingInput", body={"trainingInput": {"region": "europe-west4"}})
    )
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    status, _ = api_error(jobs.patch(name=name, body={"labels": {"team": "x"}}))  # no mask
    assert status == 400
    status, _ = api_error(jobs.patch(name=name, updateMask="labels", body={"labels": {"Team": "x"}}))
    assert status == 400
    status, _ = api_error(jobs.patch(name=f"{PARENT}/jobs/nope", updateMask="labels", body={"labels": {}}))
    assert status == 404

    cleared = jobs.patch(name=name, updateMask="labels,etag", body={"labels": {}}).execute()
    assert "labels" not in cleared


def test_ml_cancel_then_reuse_and_cancel_again(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "cancel_me")
    jobs = ml_client.projects().jobs()
    assert jobs.cancel(name=f"{PARENT}/jobs/cancel_me", body={}).execute() == {}
    job = get_ml(ml_client, "cancel_me")
    assert job["state"] == "CANCELLED"
    assert RFC3339_Z.match(job["endTime"])
    assert "startTime" not in job  # it never ran

    status, error = api_error(jobs.cancel(name=f"{PARENT}/jobs/cancel_me", body={}))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")

    status, error = api_error(jobs.create(parent=PARENT, body=ml_body("cancel_me")))
    assert (status, error["status"]) == (409, "ALREADY_EXISTS")
    assert error["message"] == (
        f"Resource in projects [{PROJECT}] is the subject of a conflict: Field: job.job_id "
        "Error: A job with this id already exists."
    )


def test_ml_cancelling_lasts_cancel_seconds(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.cancel_seconds = 30
    create_ml(ml_client, "slow_cancel")
    ml_client.projects().jobs().cancel(name=f"{PARENT}/jobs/slow_cancel", body={}).execute()
    assert get_ml(ml_client, "slow_cancel")["state"] == "CANCELLING"
    control(emulator, "/_emulator/advance", {"seconds": 30})
    assert get_ml(ml_client, "slow_cancel")["state"] == "CANCELLED"


def test_ml_reused_id_conflicts_even_when_running_or_succeeded(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "dup")
    status, error = api_error(ml_client.projects().jobs().create(parent=PARENT, body=ml_body("dup")))
    assert (status, error["status"]) == (409, "ALREADY_EXISTS")
    emulator.state.set_phase_seconds(0)
    assert get_ml(ml_client, "dup")["state"] == "SUCCEEDED"
    status, _ = api_error(ml_client.projects().jobs().create(parent=PARENT, body=ml_body("dup")))
    assert status == 409
    # another project may use the same id
    other = ml_client.projects().jobs().create(parent="projects/other", body=ml_body("dup")).execute()
    assert other["jobId"] == "dup"


def test_ml_unknown_job_is_404(emulator: Emulator, ml_client: Any) -> None:
    jobs = ml_client.projects().jobs()
    for call in (jobs.get(name=f"{PARENT}/jobs/ghost"), jobs.cancel(name=f"{PARENT}/jobs/ghost", body={})):
        status, error = api_error(call)
        assert (status, error["status"]) == (404, "NOT_FOUND")
        assert "ghost" in error["message"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"jobId": "no_region", "trainingInput": {"pythonModule": "t.m", "packageUris": ["gs://b/p"]}},
         "Field: training_input.region Error: A region must be specified."),
        (ml_body("1starts_with_digit"), "job_id"),
        (ml_body("has-dash"), "job_id"),
        (ml_body("x" * 129), "job_id"),
        ({"trainingInput": {"region": REGION}}, "job_id"),
        ({"jobId": "no_input"}, "training_input"),
        (ml_body("unknown_field", masterConfig={"imageUri": "gcr.io/p/i", "foo": 1}),
         "trainingInput.masterConfig.foo"),
        ({**ml_body("top_unknown"), "trainingInputs": {}}, "trainingInputs"),
        (ml_body("bad_enum", scaleTier="HUGE"), "trainingInput.scaleTier"),
        (ml_body("bad_duration", scheduling={"maxRunningTime": "2h"}),
         "trainingInput.scheduling.maxRunningTime"),
        (ml_body("bad_count", workerCount="two"), "trainingInput.workerCount"),
        (ml_body("no_master_type", masterType=None), "master_type"),
        (ml_body("no_code", pythonModule=None), "python_module"),
        ({**ml_body("bad_label"), "labels": {"Team": "vision"}}, "Team"),
        ({**ml_body("bad_label_value"), "labels": {"team": "Vision Team"}}, "Vision Team"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_ml_create_rejects_invalid_bodies(emulator: Emulator, ml_client: Any, body: Any, needle: str) -> None:
    if isinstance(body.get("trainingInput"), dict):  # drop keys set to None by the case
        body = {**body, "trainingInput": {k: v for k, v in body["trainingInput"].items() if v is not None}}
    status, error = api_error(ml_client.projects().jobs().create(parent=PARENT, body=body))
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    assert needle in error["message"]
    assert ml_client.projects().jobs().list(parent=PARENT).execute() == {}


def test_ml_strict_int64_mode(emulator: Emulator, ml_client: Any) -> None:
    loose = create_ml(ml_client, "loose", workerCount=2)
    assert loose["trainingInput"]["workerCount"] == "2"  # accepted as a number, answered as Google does: text
    emulator.state.strict_int64 = True
    strict = ml_body("strict", workerCount=2)
    status, error = api_error(ml_client.projects().jobs().create(parent=PARENT, body=strict))
    assert status == 400 and "trainingInput.workerCount" in error["message"]
    assert create_ml(ml_client, "strict")["trainingInput"]["workerCount"] == "2"


def test_ml_bad_json_body_is_400(emulator: Emulator) -> None:
    status, payload = control(emulator, f"/v1/{PARENT}/jobs", b"{not json", method="POST")
    assert status == 400 and payload["error"]["status"] == "INVALID_ARGUMENT"
    status, payload = control(emulator, f"/v1/{PARENT}/jobs", b"[1, 2]", method="POST")
    assert status == 400


def test_project_number_names_the_same_project(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "by_number")
    job = ml_client.projects().jobs().get(name=f"projects/{project_number(PROJECT)}/jobs/by_number").execute()
    assert job["jobId"] == "by_number"


# ----------------------------------------------------------------------------------------- clock


def test_phase_zero_finishes_at_once(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.set_phase_seconds(0)
    created = create_ml(ml_client, "instant")
    assert created["state"] == "SUCCEEDED"
    job = get_ml(ml_client, "instant")
    assert job["state"] == "SUCCEEDED"
    assert job["trainingOutput"] == {"consumedMLUnits": 1.5}
    assert job["createTime"] <= job["startTime"] <= job["endTime"]
    status, error = api_error(ml_client.projects().jobs().cancel(name=f"{PARENT}/jobs/instant", body={}))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")


def test_clock_advances_through_every_phase(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.set_phase_seconds(60)
    seen = [create_ml(ml_client, "stepper")]
    for _ in range(3):
        emulator.state.advance(60)
        seen.append(get_ml(ml_client, "stepper"))
    assert [j["state"] for j in seen] == ["QUEUED", "PREPARING", "RUNNING", "SUCCEEDED"]
    assert len({j["etag"] for j in seen}) == 4  # every change changes the etag
    running, done = seen[2], seen[3]
    assert "startTime" in running and "endTime" not in running
    assert done["endTime"] > done["startTime"] > done["createTime"]
    # a longer phase set later never moves a finished job back
    emulator.state.set_phase_seconds(1e9)
    assert get_ml(ml_client, "stepper")["state"] == "SUCCEEDED"


def test_fail_job_fails_immediately(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "doomed")
    emulator.state.fail_job("doomed", "OOM in replica master 0")
    job = get_ml(ml_client, "doomed")
    assert job["state"] == "FAILED"
    assert job["errorMessage"] == "OOM in replica master 0"
    assert "trainingOutput" not in job
    with pytest.raises(ValueError):
        emulator.state.fail_job("doomed")
    with pytest.raises(KeyError):
        emulator.state.fail_job("never_created")


def test_failed_label_rule(emulator: Emulator, ml_client: Any, vertex_client: Any) -> None:
    emulator.state.set_phase_seconds(0)
    body = ml_body("labelled")
    body["labels"]["emulator-outcome"] = "failed"
    job = ml_client.projects().jobs().create(parent=PARENT, body=body).execute()
    assert job["state"] == "FAILED" and "non-zero status" in job["errorMessage"]
    assert "startTime" in job  # it ran, then failed
    vx = customjobs(vertex_client).create(
        parent=VX_PARENT, body=vertex_body(labels={"emulator-outcome": "failed"})
    ).execute()
    assert vx["state"] == "JOB_STATE_FAILED"
    assert vx["error"]["code"] == 13 and vx["error"]["message"]
    ok = create_ml(ml_client, "unlabelled")
    assert ok["state"] == "SUCCEEDED"


# ---------------------------------------------------------------------------------------- faults


@pytest.mark.parametrize(
    ("status", "name"), [(429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL"), (503, "UNAVAILABLE")]
)
def test_injected_status_does_nothing(emulator: Emulator, ml_client: Any, status: int, name: str) -> None:
    emulator.state.inject_faults(status=status, count=1, method="jobs.create")
    got, error = api_error(ml_client.projects().jobs().create(parent=PARENT, body=ml_body("faulty")))
    assert (got, error["status"]) == (status, name)
    assert ml_client.projects().jobs().list(parent=PARENT).execute() == {}  # nothing was created
    assert create_ml(ml_client, "faulty")["jobId"] == "faulty"  # the fault was used up


def test_fault_only_hits_its_method(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "target")
    emulator.state.inject_faults(status=503, count=2, method="jobs.get")
    create_ml(ml_client, "unaffected")  # jobs.create is not hit
    for _ in range(2):
        assert api_error(ml_client.projects().jobs().get(name=f"{PARENT}/jobs/target"))[0] == 503
    assert get_ml(ml_client, "target")["jobId"] == "target"
    emulator.state.inject_faults(status=500)  # any method
    assert api_error(ml_client.projects().getConfig(name=PARENT))[0] == 500
    with pytest.raises(ValueError):
        emulator.state.inject_faults(method="jobs.insert")


def test_num_retries_recovers_from_one_503(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.inject_faults(status=503, count=1, method="jobs.create")
    request = ml_client.projects().jobs().create(parent=PARENT, body=ml_body("retried"))
    sleeps: list[float] = []
    request._sleep = sleeps.append  # googleapiclient's back-off hook: record, don't sleep
    job = request.execute(num_retries=2)
    assert job["jobId"] == "retried" and job["state"] == "QUEUED"
    assert len(sleeps) == 1
    assert len(emulator.state.requests("jobs.create")) == 2


def test_dropped_create_is_resent_by_httplib2_and_conflicts(emulator: Emulator, ml_client: Any) -> None:
    """One lost answer: httplib2 silently re-sends the POST, which meets the job the first one made."""
    emulator.state.drop_next_response("jobs.create")
    status, error = api_error(ml_client.projects().jobs().create(parent=PARENT, body=ml_body("lost")))
    assert (status, error["status"]) == (409, "ALREADY_EXISTS")
    assert get_ml(ml_client, "lost")["state"] == "QUEUED"  # the first copy created it
    assert len(emulator.state.requests("jobs.create")) == 2


def test_two_dropped_answers_raise_remote_disconnected(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.drop_next_response("jobs.create", count=2)
    with pytest.raises(http.client.RemoteDisconnected) as caught:
        ml_client.projects().jobs().create(parent=PARENT, body=ml_body("gone")).execute()
    assert isinstance(caught.value, ConnectionError)  # what execute(num_retries) retries on
    assert get_ml(ml_client, "gone")["jobId"] == "gone"


def test_num_retries_retries_a_disconnect(emulator: Emulator, ml_client: Any) -> None:
    emulator.state.drop_next_response("jobs.create", count=2)
    request = ml_client.projects().jobs().create(parent=PARENT, body=ml_body("again"))
    sleeps: list[float] = []
    request._sleep = sleeps.append
    with pytest.raises(HttpError) as caught:
        request.execute(num_retries=1)
    assert caught.value.status_code == 409  # the retry met the job the dropped call created
    assert len(sleeps) == 1
    assert len(emulator.state.requests("jobs.create")) == 3


def test_dropped_vertex_create_makes_a_duplicate(emulator: Emulator, vertex_client: Any) -> None:
    """Vertex ids are server-assigned: the silent re-send of a lost create makes a second job."""
    emulator.state.drop_next_response("customJobs.create")
    job = customjobs(vertex_client).create(parent=VX_PARENT, body=vertex_body("dup")).execute()
    listed = customjobs(vertex_client).list(parent=VX_PARENT).execute()["customJobs"]
    assert [j["displayName"] for j in listed] == ["dup", "dup"]
    assert listed[0]["name"] == job["name"] != listed[1]["name"]


def test_delay_fault_times_out_a_short_client_timeout(emulator: Emulator, held_delays: HeldDelays) -> None:
    """The delayed call is held (as long as the test likes) before it is handled: the client's timeout ends
    it; the delay is used up, so the next call answers."""
    emulator.state.inject_delay(0.5, method="projects.getConfig")
    request = urllib.request.Request(emulator.url + f"v1/{PARENT}:getConfig")
    with pytest.raises((TimeoutError, urllib.error.URLError)) as caught:
        urllib.request.urlopen(request, timeout=0.5)
    error = caught.value
    assert isinstance(error, TimeoutError) or isinstance(getattr(error, "reason", None), TimeoutError), error
    assert held_delays.seconds == [0.5]  # the server was sleeping the injected delay when the client gave up
    assert len(emulator.state.requests("projects.getConfig")) == 1 and emulator.state.pending_faults() == []
    held_delays.release()  # the held handler answers into a closed connection, quietly
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.loads(response.read())["serviceAccountProject"] == project_number(PROJECT)
    assert held_delays.seconds == [0.5]  # the second call was not delayed


# ---------------------------------------------------------------------------------------- Vertex


def test_vertex_create_get_list_by_label(emulator: Emulator, vertex_client: Any) -> None:
    api = customjobs(vertex_client)
    sent = vertex_body("alpha", labels={"team": "a"})
    created = api.create(parent=VX_PARENT, body=sent).execute()
    match = re.fullmatch(rf"{VX_PARENT}/customJobs/(\d{{19}})", created["name"])
    assert match, created["name"]
    assert created["state"] == "JOB_STATE_QUEUED"
    assert created["displayName"] == "alpha"
    assert created["jobSpec"] == sent["jobSpec"] and created["labels"] == {"team": "a"}
    assert RFC3339_Z.match(created["createTime"]) and RFC3339_Z.match(created["updateTime"])
    assert api.get(name=created["name"]).execute() == created

    second = api.create(parent=VX_PARENT, body=vertex_body("beta", labels={"team": "b"})).execute()
    assert int(second["name"].rsplit("/", 1)[1]) > int(match.group(1))
    api.create(parent="projects/demo-project/locations/europe-west4", body=vertex_body("gamma")).execute()

    def names(**kw: Any) -> list[str]:
        return [j["displayName"] for j in api.list(parent=VX_PARENT, **kw).execute().get("customJobs", [])]

    assert names() == ["beta", "alpha"]  # newest first; europe-west4 is elsewhere
    assert names(filter='labels.team="a"') == ["alpha"]
    assert names(filter='display_name="beta"') == ["beta"]
    assert names(filter='displayName="beta" AND labels.team="a"') == []
    assert names(filter="state=JOB_STATE_QUEUED") == ["beta", "alpha"]
    assert names(filter="state=JOB_STATE_RUNNING") == []
    first_page = api.list(parent=VX_PARENT, pageSize=1).execute()
    assert [j["displayName"] for j in first_page["customJobs"]] == ["beta"]
    assert names(pageSize=1, pageToken=first_page["nextPageToken"]) == ["alpha"]

    emulator.state.set_phase_seconds(100)
    emulator.state.advance(200)
    running = api.get(name=created["name"]).execute()
    assert running["state"] == "JOB_STATE_RUNNING" and "startTime" in running
    assert names(filter="state=JOB_STATE_RUNNING") == ["beta", "alpha"]
    emulator.state.advance(100)
    done = api.get(name=created["name"]).execute()
    assert done["state"] == "JOB_STATE_SUCCEEDED" and "endTime" in done and "error" not in done


def test_vertex_cancel_and_delete(emulator: Emulator, vertex_client: Any) -> None:
    api = customjobs(vertex_client)
    name = api.create(parent=VX_PARENT, body=vertex_body()).execute()["name"]

    status, error = api_error(api.delete(name=name))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")
    assert "cancelled first" in error["message"]

    assert api.cancel(name=name, body={}).execute() == {}
    cancelled = api.get(name=name).execute()
    assert cancelled["state"] == "JOB_STATE_CANCELLED"
    assert cancelled["error"]["code"] == 1 and "endTime" in cancelled
    status, error = api_error(api.cancel(name=name, body={}))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")

    operation = api.delete(name=name).execute()
    assert operation["done"] is True
    assert operation["response"] == {"@type": "type.googleapis.com/google.protobuf.Empty"}
    assert re.fullmatch(rf"{VX_PARENT}/operations/\d+", operation["name"])
    op_again = vertex_client.projects().locations().operations().get(name=operation["name"]).execute()
    assert op_again == operation

    for call in (api.get(name=name), api.delete(name=name), api.cancel(name=name, body={})):
        status, error = api_error(call)
        assert (status, error["status"]) == (404, "NOT_FOUND")


def test_vertex_delete_of_finished_job(emulator: Emulator, vertex_client: Any) -> None:
    emulator.state.set_phase_seconds(0)
    api = customjobs(vertex_client)
    name = api.create(parent=VX_PARENT, body=vertex_body()).execute()["name"]
    status, error = api_error(api.cancel(name=name, body={}))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")
    assert api.delete(name=name).execute()["done"] is True
    assert api.list(parent=VX_PARENT).execute() == {}


def _pools(body: dict[str, Any]) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = body["jobSpec"]["workerPoolSpecs"]
    return pools


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda b: b.pop("displayName"), "display_name"),
        (lambda b: b["jobSpec"].update(workerPoolSpecs=[]), "worker_pool_specs"),
        (lambda b: b.pop("jobSpec"), "worker_pool_specs"),
        (lambda b: _pools(b)[0]["machineSpec"].pop("machineType"), "machine_type"),
        (lambda b: _pools(b)[1].pop("replicaCount"), "replica_count"),
        (lambda b: _pools(b)[1].pop("containerSpec"), "container_spec"),
        (lambda b: _pools(b)[0].pop("pythonPackageSpec"), "python_package_spec"),
        (lambda b: _pools(b)[0]["pythonPackageSpec"].pop("pythonModule"), "python_module"),
        (lambda b: _pools(b)[0].update(replicaCount="3"), "exactly one replica"),
        (lambda b: _pools(b)[0].update(machineSpecs={}), "jobSpec.workerPoolSpecs[0].machineSpecs"),
        (lambda b: _pools(b)[0]["machineSpec"].update(acceleratorCount="1"),
         "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"),
        (lambda b: _pools(b)[0]["machineSpec"].update(acceleratorType="GPU"), "acceleratorType"),
        (lambda b: b["labels"].update({"Bad": "x"}), "Bad"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_vertex_create_rejects_invalid_bodies(
    emulator: Emulator, vertex_client: Any, mutate: Any, needle: str
) -> None:
    body = vertex_body()
    mutate(body)
    status, error = api_error(customjobs(vertex_client).create(parent=VX_PARENT, body=body))
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    assert needle in error["message"]
    assert emulator.state.jobs() == []


def test_vertex_empty_secondary_pool_is_allowed(emulator: Emulator, vertex_client: Any) -> None:
    body = vertex_body()
    _pools(body).insert(1, {})
    job = customjobs(vertex_client).create(parent=VX_PARENT, body=body).execute()
    assert _pools(job)[1] == {}


# -------------------------------------------------------------------------- log and control API


def test_request_log_never_holds_headers_or_credentials(emulator: Emulator, ml_client: Any) -> None:
    create_ml(ml_client, "logged")
    request = urllib.request.Request(
        emulator.url + f"v1/{PARENT}/jobs/logged?key=AIzaSECRETKEY&alt=json",
        headers={"Authorization": "Bearer ya29.SECRET-TOKEN", "X-Goog-User-Project": "billing"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.loads(response.read())["jobId"] == "logged"
    log = emulator.state.requests()
    assert [r["method"] for r in log] == ["jobs.create", "jobs.get"]
    assert all(set(entry) == {"method", "http", "path", "query"} for entry in log)
    assert log[1] == {
        "method": "jobs.get",
        "http": "GET",
        "path": f"/v1/{PARENT}/jobs/logged",
        "query": {"key": "<redacted>", "alt": "json"},
    }
    _, remote = control(emulator, "/_emulator/requests")
    text = json.dumps(remote).lower()
    for secret in ("secret", "authorization", "bearer", "billing", "user-agent", "x-goog"):
        assert secret not in text
    assert remote == log


def test_control_endpoints(emulator: Emulator, ml_client: Any) -> None:
    assert control(emulator, "/_emulator/health") == (200, {"ok": True})
    assert control(emulator, "/_emulator/phase", {"seconds": 10})[0] == 200
    assert emulator.state.phase_seconds == 10
    create_ml(ml_client, "ctl")
    assert control(emulator, "/_emulator/advance", {"seconds": 20})[0] == 200
    assert get_ml(ml_client, "ctl")["state"] == "RUNNING"

    status, jobs = control(emulator, "/_emulator/jobs")
    assert status == 200
    assert [(j["api"], j["name"], j["job"]["state"]) for j in jobs] == [
        ("ml", f"{PARENT}/jobs/ctl", "RUNNING")
    ]

    status, faults = control(emulator, "/_emulator/faults", {"status": 429, "count": 1, "method": "jobs.get"})
    assert status == 200 and faults[0]["status"] == 429
    assert api_error(ml_client.projects().jobs().get(name=f"{PARENT}/jobs/ctl"))[0] == 429
    drop = {"drop": True, "method": "jobs.cancel", "count": 2}
    assert control(emulator, "/_emulator/faults", drop)[0] == 200
    with pytest.raises(ConnectionError):
        ml_client.projects().jobs().cancel(name=f"{PARENT}/jobs/ctl", body={}).execute()
    assert get_ml(ml_client, "ctl")["state"] == "CANCELLED"  # executed, answer lost

    create_ml(ml_client, "ctl_fail")
    status, failed = control(emulator, "/_emulator/fail", {"job": "ctl_fail", "message": "boom"})
    assert status == 200 and failed["state"] == "FAILED" and failed["errorMessage"] == "boom"
    assert get_ml(ml_client, "ctl_fail")["errorMessage"] == "boom"
    assert control(emulator, "/_emulator/fail", {"job": "ghost"})[0] == 404
    assert control(emulator, "/_emulator/fail", {"job": "ctl_fail"})[0] == 400

    _, only_gets = control(emulator, "/_emulator/requests?method=jobs.get")
    assert only_gets and {r["method"] for r in only_gets} == {"jobs.get"}
    assert control(emulator, "/_emulator/reset", {}) == (200, {})
    assert control(emulator, "/_emulator/jobs") == (200, [])
    assert control(emulator, "/_emulator/requests") == (200, [])

    status, payload = control(emulator, "/_emulator/nope")
    assert (status, payload["error"]["status"]) == (404, "NOT_FOUND")
    status, payload = control(emulator, "/_emulator/faults", b"{oops", method="POST")
    assert (status, payload["error"]["code"]) == (400, 400)
    status, payload = control(emulator, "/_emulator/faults", {"status": 200})
    assert status == 400


def test_unknown_api_path_is_404_in_google_shape(emulator: Emulator) -> None:
    status, payload = control(emulator, "/v1/projects/p/models")
    assert status == 404
    assert payload == {"error": {"code": 404, "message": payload["error"]["message"], "status": "NOT_FOUND"}}
    status, _ = control(emulator, f"/v1/{PARENT}/jobs/x", method="DELETE")  # ml jobs cannot be deleted
    assert status == 404


def test_concurrent_creates_of_one_id_yield_one_job(emulator: Emulator) -> None:
    results: list[int] = []
    lock = threading.Lock()

    def create(index: int) -> None:
        client = build_client("ml", emulator.url)
        try:
            client.projects().jobs().create(parent=PARENT, body=ml_body("race")).execute()
            code = 200
        except HttpError as error:
            code = error.status_code
        with lock:
            results.append(code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [200] + [409] * 7
    assert len(emulator.state.jobs()) == 1


# --------------------------------------------------------------------------------------- the CLI


@pytest.mark.slow
def test_main_cli_serves_until_sigterm() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", "from gcp_training_jobs.emulator import main; main(['--port','0'])"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"emulator listening on (http://127\.0\.0\.1:(\d+)/)", line)
        assert match, line
        assert int(match.group(2)) > 0
        config = build_client("ml", match.group(1)).projects().getConfig(name=PARENT).execute()
        assert config["serviceAccountProject"] == project_number(PROJECT)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0  # a bound on a hang, not a timing
        assert process.stderr is not None and process.stderr.read() == ""  # quiet by default
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_emulator_start_stop_releases_port() -> None:
    emu = Emulator(port=0, phase_seconds=0).start()
    url = emu.url
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url) and emu.port > 0
    assert control(emu, "/_emulator/health")[0] == 200
    emu.stop()
    emu.stop()  # idempotent
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "_emulator/health", timeout=1)


# ---------------------------------------------------------------------------- discovery checker


def test_discovery_documents_load_and_cache() -> None:
    ml = discovery.load_document("ml")
    assert ml["rootUrl"] == "https://ml.googleapis.com/" and ml["servicePath"] == ""
    assert discovery.load_document("ml") is ml
    assert "GoogleCloudAiplatformV1CustomJob" in discovery.load_document("aiplatform")["schemas"]
    assert discovery.load_document("compute")["servicePath"] == "compute/v1/"  # reservations
    with pytest.raises(ValueError):
        discovery.load_document("storage")
    assert "state" in discovery.output_only_fields("ml", "GoogleCloudMlV1__Job")


def test_validate_body_accepts_guide_like_bodies() -> None:
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", ml_body(), strict_int64=True) == []
    assert discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", vertex_body(), strict_int64=True
    ) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"trainingInput": {"masterConfig": {"foo": 1}}},
         'trainingInput.masterConfig.foo: unknown field "foo"'),
        ({"trainingInput": {"scaleTier": "MEGA"}}, 'trainingInput.scaleTier: invalid value "MEGA"'),
        ({"trainingInput": {"workerCount": 2}},
         "trainingInput.workerCount: int64 must be sent as a JSON string"),
        ({"trainingInput": {"workerCount": "-"}}, "trainingInput.workerCount: invalid int64"),
        ({"trainingInput": {"workerCount": True}}, "trainingInput.workerCount: expected int64"),
        ({"trainingInput": {"scheduling": {"priority": "5"}}},
         "trainingInput.scheduling.priority: expected int32"),
        ({"trainingInput": {"scheduling": {"priority": 2**31}}},
         "trainingInput.scheduling.priority: value 2147483648 out of range for int32"),
        ({"trainingInput": {"scheduling": {"maxWaitTime": "30m"}}}, "trainingInput.scheduling.maxWaitTime"),
        ({"trainingInput": {"args": "--x"}}, "trainingInput.args: expected an array"),
        ({"trainingInput": {"args": [1]}}, "trainingInput.args[0]: expected a string"),
        ({"trainingInput": {"enableWebAccess": "yes"}}, "trainingInput.enableWebAccess: expected a boolean"),
        ({"labels": {"team": 7}}, "labels.team: expected a string"),
        ({"labels": ["team"]}, "labels: expected an object"),
        ({"createTime": "yesterday"}, "createTime: invalid timestamp"),
        ([], "<root>: expected an object"),
    ],
)
def test_validate_body_names_the_path(body: Any, expected: str) -> None:
    problems = discovery.validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True)
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected), problems


def test_validate_body_int64_modes_and_vertex_paths() -> None:
    body = {"trainingInput": {"workerCount": 3, "evaluatorCount": "1"}}
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", body) == []
    assert len(discovery.validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True)) == 1
    vx = vertex_body()
    _pools(vx)[1]["replicaCount"] = 2
    _pools(vx)[0]["diskSpec"] = {"bootDiskSizeGb": "100"}
    problems = discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", vx, strict_int64=True
    )
    assert sorted(p.split(":")[0] for p in problems) == [
        "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb",
        "jobSpec.workerPoolSpecs[1].replicaCount",
    ]
    assert discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", {"name": "x"}, reject_output_only=True
    ) == ['name: field "name" is output only']
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", {"labels": None, "jobId": None}) == []
