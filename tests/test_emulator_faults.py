"""The emulator's faults (an error status, a dropped answer, a delay) as Google's client meets them. Nothing is
timed: retries' back-off sleeps are captured instead of slept, and an injected delay is held until the test lets it
go (`held_delays`).
"""

from __future__ import annotations

import http.client
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from googleapiclient.errors import HttpError  # noqa: E402

from gcp_training_jobs.emulator import Emulator, project_number  # noqa: E402

pytest.register_assert_rewrite("tests.conftest_emulator")  # it is also loaded as a plugin below
from tests.conftest_emulator import HeldDelays  # noqa: E402
from tests.emulator_support import (  # noqa: E402
    PARENT,
    PROJECT,
    VX_PARENT,
    api_error,
    create_ml,
    customjobs,
    get_ml,
    ml_body,
    vertex_body,
)

#: Fixtures: emulator (clean state, frozen phases), emulator_server, ml_client, vertex_client, held_delays.


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
