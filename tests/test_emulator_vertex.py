"""The emulator's Vertex AI custom jobs, its request log and its control API, driven through Google's own client.
"""

from __future__ import annotations

import json
import re
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

from gcp_training_jobs.emulator import Emulator  # noqa: E402

pytest.register_assert_rewrite("tests.conftest_emulator")  # it is also loaded as a plugin below
from tests.conftest_emulator import build_client  # noqa: E402
from tests.emulator_support import (  # noqa: E402
    PARENT,
    RFC3339_Z,
    VX_PARENT,
    api_error,
    control,
    create_ml,
    customjobs,
    get_ml,
    ml_body,
    vertex_body,
    worker_pools,
)

#: Fixtures: emulator (clean state, frozen phases), emulator_server, ml_client, vertex_client, held_delays.


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


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda b: b.pop("displayName"), "display_name"),
        (lambda b: b["jobSpec"].update(workerPoolSpecs=[]), "worker_pool_specs"),
        (lambda b: b.pop("jobSpec"), "worker_pool_specs"),
        (lambda b: worker_pools(b)[0]["machineSpec"].pop("machineType"), "machine_type"),
        (lambda b: worker_pools(b)[1].pop("replicaCount"), "replica_count"),
        (lambda b: worker_pools(b)[1].pop("containerSpec"), "container_spec"),
        (lambda b: worker_pools(b)[0].pop("pythonPackageSpec"), "python_package_spec"),
        (lambda b: worker_pools(b)[0]["pythonPackageSpec"].pop("pythonModule"), "python_module"),
        (lambda b: worker_pools(b)[0].update(replicaCount="3"), "exactly one replica"),
        (lambda b: worker_pools(b)[0].update(machineSpecs={}), "jobSpec.workerPoolSpecs[0].machineSpecs"),
        (lambda b: worker_pools(b)[0]["machineSpec"].update(acceleratorCount="1"),
         "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"),
        (lambda b: worker_pools(b)[0]["machineSpec"].update(acceleratorType="GPU"), "acceleratorType"),
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
    worker_pools(body).insert(1, {})
    job = customjobs(vertex_client).create(parent=VX_PARENT, body=body).execute()
    assert worker_pools(job)[1] == {}


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
