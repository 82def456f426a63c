"""The emulator's Cloud Logging surface, read with Google's own client (logging v2, static discovery): the entries
its jobs write as they move on its clock (service lines, each replica's trainer, a failing replica's traceback),
the query language's filters, order and paging, and Google's 400s for what a request gets wrong."""

from __future__ import annotations

from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.logging_filter import compile_filter
from gcp_training_jobs.emulator.logging_v2 import MAX_STEPS, STEP_SECONDS, TRACEBACK
from tests.conftest_emulator import build_client
from tests.helpers import container_pool, custom_job_spec

PROJECT, REGION = "my-proj", "us-central1"
PHASE = 100.0


@pytest.fixture(scope="module")
def logging_client(frozen_emulator_server: Emulator) -> Any:
    return build_client("logging", frozen_emulator_server.url, "v2")


def vertex_job(vertex_client: Any, *, fail: bool = False, workers: int = 0) -> str:
    """A custom job (a primary pool and optionally a pool of workers); its numeric id."""
    pools = [{"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
              "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1", "args": ["--epochs=3"]}}]
    if workers:
        pools.append(container_pool({"machineType": "n1-standard-4"}, replicaCount=str(workers)))
    body: dict[str, Any] = {"displayName": "resnet", "jobSpec": custom_job_spec(*pools)}
    if fail:
        body["labels"] = {"emulator-outcome": "failed"}
    job = vertex_client.projects().locations().customJobs().create(
        parent=f"projects/{PROJECT}/locations/{REGION}", body=body).execute()
    return str(job["name"]).rsplit("/", 1)[-1]


def entries(client: Any, flt: str, **extra: Any) -> list[dict[str, Any]]:
    """Every matching entry, all pages."""
    found, token = [], None
    while True:
        body = {"resourceNames": [f"projects/{PROJECT}"], "filter": flt, **extra}
        if token:
            body["pageToken"] = token
        answer = client.entries().list(body=body).execute()
        found += answer.get("entries", [])
        token = answer.get("nextPageToken")
        if not token:
            return found


def message(entry: dict[str, Any]) -> str:
    return str(entry.get("textPayload") or entry["jsonPayload"]["message"])


def test_a_running_job_logs_under_its_ml_job_resource_one_trainer_per_replica(
        emulator: Emulator, vertex_client: Any, logging_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    job_id = vertex_job(vertex_client, workers=2)
    emulator.state.advance(2 * PHASE + 3.5 * STEP_SECONDS)  # queued, pending, then 35 s of running
    found = entries(logging_client, f'resource.type="ml_job" AND resource.labels.job_id="{job_id}"')
    tasks = {e["resource"]["labels"]["task_name"] for e in found}
    assert tasks == {"service", "workerpool0-0", "workerpool1-0", "workerpool1-1"}
    assert all(e["resource"]["labels"] == {"job_id": job_id, "project_id": PROJECT,
                                           "task_name": e["resource"]["labels"]["task_name"]} for e in found)
    assert all(e["logName"] == f"projects/{PROJECT}/logs/{e['resource']['labels']['task_name']}" for e in found)
    primary = [message(e) for e in found if e["resource"]["labels"]["task_name"] == "workerpool0-0"]
    assert primary == ["Running us-docker.pkg.dev/p/r/t:1 --epochs=3", "step 1: loss=0.5000",
                       "step 2: loss=0.3333", "step 3: loss=0.2500"]
    service = [message(e) for e in found if e["resource"]["labels"]["task_name"] == "service"]
    assert service == ["Waiting for job to be provisioned.", "Job is running."]
    stamps = [(e["timestamp"], e["insertId"]) for e in found]
    assert stamps == sorted(stamps) and len(set(e["insertId"] for e in found)) == len(found)


def test_a_failed_replica_logs_its_traceback_then_the_jobs_error(
        emulator: Emulator, vertex_client: Any, logging_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    job_id = vertex_job(vertex_client, fail=True)
    emulator.state.advance(3 * PHASE + 1)
    errors = entries(logging_client, f'resource.labels.job_id="{job_id}" severity>=ERROR')
    assert [message(e) for e in errors] == [*TRACEBACK, "The replica workerpool0-0 exited with a non-zero status "
                                                         "of 1."]
    assert [e["resource"]["labels"]["task_name"] for e in errors] == ["workerpool0-0"] * len(TRACEBACK) + ["service"]
    steps = entries(logging_client, f'resource.labels.job_id="{job_id}" jsonPayload.message=~"^step "')
    assert len(steps) == int(PHASE // STEP_SECONDS)  # a line every 10 s of its 100 s run, then no more


def test_an_ml_v1_job_logs_under_its_job_id_with_its_tasks(
        emulator: Emulator, ml_client: Any, logging_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    body = {"jobId": "gpu_1", "trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "workerType": "n1-standard-8", "workerCount": "1",
        "region": REGION, "pythonModule": "trainer.task", "packageUris": ["gs://b/t.tar.gz"], "args": ["--x=1"]}}
    ml_client.projects().jobs().create(parent=f"projects/{PROJECT}", body=body).execute()
    emulator.state.advance(1e6)  # long past its end: the steps stop at MAX_STEPS... of the 100 s it ran
    found = entries(logging_client, 'resource.labels.job_id="gpu_1" -resource.labels.task_name="service"')
    assert {e["resource"]["labels"]["task_name"] for e in found} == {"master-replica-0", "worker-replica-0"}
    assert message(found[0]) == "Running trainer.task --x=1"
    assert len(found) == 2 * (1 + min(MAX_STEPS, int(PHASE // STEP_SECONDS)))


def test_order_paging_and_time_bounds(emulator: Emulator, vertex_client: Any, logging_client: Any) -> None:
    emulator.state.set_phase_seconds(PHASE)
    job_id = vertex_job(vertex_client)
    emulator.state.advance(2 * PHASE + 95)
    flt = f'resource.labels.job_id="{job_id}"'
    ascending = entries(logging_client, flt, pageSize=3)
    descending = entries(logging_client, flt, orderBy="timestamp desc", pageSize=4)
    assert len(ascending) == 2 + 1 + 9 and descending == list(reversed(ascending))
    first = logging_client.entries().list(body={"resourceNames": [f"projects/{PROJECT}"], "filter": flt}).execute()
    assert len(first["entries"]) == len(ascending) and "nextPageToken" not in first  # 12 < the default page of 50
    middle = ascending[5]["timestamp"]
    after = entries(logging_client, f'{flt} AND timestamp>"{middle}"')
    assert after == [e for e in ascending if e["timestamp"] > middle]
    either = entries(logging_client, f'{flt} AND (jsonPayload.message:"step 1:" OR textPayload="Job is running.")')
    assert [message(e) for e in either] == ["Job is running.", "step 1: loss=0.5000"]
    other_project = logging_client.entries().list(body={"resourceNames": ["projects/another-project"]}).execute()
    assert other_project == {}


def test_pages_stay_whole_while_a_running_job_writes_between_them(emulator: Emulator, vertex_client: Any,
                                                                 logging_client: Any) -> None:
    """A page token names the last entry given: entries written between two pages never shift the next page, so
    newest first gives each older entry once, in order (an offset would give one twice)."""
    emulator.state.set_phase_seconds(PHASE)
    job_id = vertex_job(vertex_client)
    emulator.state.advance(2 * PHASE + 45)
    body = {"resourceNames": [f"projects/{PROJECT}"], "filter": f'resource.labels.job_id="{job_id}"',
            "orderBy": "timestamp desc", "pageSize": 3}
    first = logging_client.entries().list(body=body).execute()
    emulator.state.advance(50)  # the job writes more lines before the next page is asked for
    second = logging_client.entries().list(body={**body, "pageToken": first["nextPageToken"]}).execute()
    given = first["entries"] + second["entries"]
    ids = [e["insertId"] for e in given]
    assert len(set(ids)) == len(ids), ids
    stamps = [e["timestamp"] for e in given]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize(("body", "field", "says"), [
    ({"filter": "x"}, "resource_names", "resource_names is required"),
    ({"resourceNames": ["projects/p"], "filter": 'resource.type="ml_job" AND ('}, "filter", "Unparseable filter"),
    ({"resourceNames": ["projects/p"], "filter": "sample(insertId, 0.25)"}, "filter", "the function sample()"),
    ({"resourceNames": ["projects/p"], "filter": 'a:* SEARCH("x")'}, "filter", "the function SEARCH()"),
    ({"resourceNames": ["projects/p"], "filter": "severity=(ERROR OR INFO)"}, "filter", "a list of values"),
    ({"resourceNames": ["projects/p"], "filter": "jsonPayload.message=*"}, "filter", "jsonPayload.message:*"),
    ({"resourceNames": ["projects/p"], "filter": 'timestamp>="yesterday"'}, "filter", "Invalid timestamp"),
    ({"resourceNames": ["projects/p"], "orderBy": "severity"}, "order_by", "allowed: timestamp asc, timestamp desc"),
    ({"resourceNames": ["projects/p"], "pageSize": -1}, "page_size", "must not be negative"),
    ({"resourceNames": ["projects/p"], "pageToken": "bm90LW91cnM6MQ=="}, "page_token", "Invalid page token"),
    ({"resourceNames": ["folders/1"]}, "resource_names", "projects/PROJECT_ID only"),
])
def test_what_a_request_gets_wrong_is_a_400_naming_the_field(emulator: Emulator, logging_client: Any, body: Any,
                                                              field: str, says: str) -> None:
    with pytest.raises(HttpError) as caught:
        logging_client.entries().list(body=body).execute()
    assert caught.value.resp.status == 400
    assert says in caught.value.content.decode() and f'"field": "{field}"' in caught.value.content.decode()


def test_an_unknown_field_of_the_request_is_refused_by_its_discovery_schema(emulator: Emulator) -> None:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(emulator.url + "v2/entries:list", method="POST",
                                     data=json.dumps({"resourceNames": ["projects/p"], "fliter": "x"}).encode())
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=30)
    assert caught.value.code == 400 and 'unknown field \\"fliter\\"' in caught.value.read().decode()


def test_injected_faults_reach_entries_list(emulator: Emulator, logging_client: Any) -> None:
    emulator.state.inject_faults(403, 1, "entries.list")
    with pytest.raises(HttpError) as caught:
        logging_client.entries().list(body={"resourceNames": ["projects/p"]}).execute()
    assert caught.value.resp.status == 403
    assert emulator.state.requests("entries.list")[0]["path"] == "/v2/entries:list"


@pytest.mark.parametrize(("text", "matches"), [
    ('a="1" b="2"', True),                     # side by side: AND
    ('a="1" AND b="3"', False),
    ('a="3" OR b="2" AND c="3"', True),        # OR binds tighter than AND: (a OR b) AND c
    ('a="3" OR (b="2" AND c="4")', False),
    ('NOT a="3"', True), ('-a="1"', False),
    ('severity>=WARNING', True), ('severity>ERROR', False), ("severity=500", True),
    ('timestamp>="2026-11-23T10:00:00Z" timestamp<"2026-11-23T10:00:01.5+00:00"', True),
    ('missing="x"', False), ('missing!="x"', True),
    ('nested.key:"VAL"', True), ('nested.key=~"^v.l$"', True), ('nested.key!~"^v"', False),
    ("nested.key:*", True), ("-nested.key:*", False), ("NOT missing:*", True), ("missing:*", False),
    ("nested:*", True), ('nested:"VA"', True),                      # presence; has on a message searches it
    ('"ERR"', True), ("val", True), ('"no such text"', False), ('-"val"', False),  # global restrictions
    ('labels."ml.googleapis.com/trial_id"="7"', True), ('labels."ml.googleapis.com/trial_id"="8"', False),
    ("count>9", True), ("count<10", False), ("tags=b", True), ("tags!=c", True), ("tags!=a", False),
])
def test_the_query_language(text: str, matches: bool) -> None:
    entry = {"a": "1", "b": "2", "c": "3", "severity": "ERROR", "timestamp": "2026-11-23T10:00:01.000000Z",
             "nested": {"key": "val"}, "labels": {"ml.googleapis.com/trial_id": "7"}, "count": 12,
             "tags": ["a", "b"]}
    assert compile_filter(text)(entry) is matches


def test_the_traceback_is_on_the_replica_whose_code_failed_and_only_then(
        emulator: Emulator, vertex_client: Any, logging_client: Any) -> None:
    """A replica's exit (the user's code) logs a traceback on that replica; a preemption or an internal fault
    (Google's) logs only the service's error."""
    emulator.state.set_phase_seconds(PHASE)
    exited, running, internal = (vertex_job(vertex_client, workers=2) for _ in range(3))
    spot = vertex_client.projects().locations().customJobs().create(
        parent=f"projects/{PROJECT}/locations/{REGION}",
        body={"displayName": "spot", "jobSpec": custom_job_spec(container_pool({"machineType": "n1-standard-4"}),
                                                                 scheduling={"strategy": "SPOT"})}).execute()
    emulator.state.advance(2 * PHASE + 15)
    emulator.state.exit_replica(exited, 2, "workerpool1-1")
    emulator.state.preempt(spot["name"])
    emulator.state.fail_job(internal)
    errors = entries(logging_client, f'resource.labels.job_id="{exited}" severity=ERROR')
    assert [e["resource"]["labels"]["task_name"] for e in errors] == ["workerpool1-1"] * len(TRACEBACK) + ["service"]
    assert message(errors[-1]).startswith("The replica workerpool1-1 exited with a non-zero status of 2.")
    for job_id in (spot["name"].rsplit("/", 1)[-1], internal):
        (error,) = entries(logging_client, f'resource.labels.job_id="{job_id}" severity=ERROR')
        assert error["resource"]["labels"]["task_name"] == "service"
    assert entries(logging_client, f'resource.labels.job_id="{running}" severity=ERROR') == []  # still running
