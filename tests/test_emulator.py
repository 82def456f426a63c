"""The loopback emulator's ml v1 API and its clock, driven only through Google's own client (plus its /_emulator/
control API). Nothing is timed: the phases are frozen until a test advances the clock.
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from gcp_training_jobs.emulator import Emulator, project_number  # noqa: E402

pytest.register_assert_rewrite("tests.conftest_emulator")  # it is also loaded as a plugin below
from tests.emulator_support import (  # noqa: E402
    PARENT,
    PROJECT,
    REGION,
    RFC3339_Z,
    VX_PARENT,
    api_error,
    control,
    create_ml,
    customjobs,
    get_ml,
    ml_body,
    vertex_body,
)

#: Fixtures: emulator (clean state, frozen phases), emulator_server, ml_client, vertex_client, held_delays.


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
