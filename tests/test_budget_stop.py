"""The budget's stop function (gcp_training_jobs/resources/budget_stop/main.py, the source `budget.enforce` deploys),
against the emulator over real HTTP with Google's notification format: the Pub/Sub message's `data` is base64 JSON
(budgetDisplayName, costAmount, costIntervalStart, budgetAmount, alertThresholdExceeded, currencyCode). It cancels the
stack's queued and running custom and tuning jobs once the cost reaches the budget, once, and no other stack's."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.core.names import STACK_LABEL
from gcp_training_jobs.jobspec.load import load_job
from gcp_training_jobs.jobspec.render.bodies import render_body
from gcp_training_jobs.resources.budget_stop import main
from tests.helpers import container_pool, custom_job_spec, tuning_training_input

PROJECT, REGION = "demo-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
MINE, THEIRS = "a" * 20, "b" * 20
BUDGET = "gcp-training-jobs prod"


def message(cost: float, amount: float = 2000.0, budget: str = BUDGET, exceeded: float | None = 1.0) -> dict[str, Any]:
    """A Pub/Sub message as the Budget API publishes it (Google's notification format)."""
    data: dict[str, Any] = {"budgetDisplayName": budget, "costAmount": cost, "costIntervalStart":
                            "2026-11-01T08:00:00Z", "budgetAmount": amount, "budgetAmountType": "SPECIFIED_AMOUNT",
                            "currencyCode": "USD"}
    if exceeded is not None:
        data["alertThresholdExceeded"] = exceeded
    encoded = base64.b64encode(json.dumps(data).encode()).decode()
    return {"data": encoded, "attributes": {"schemaVersion": "1.0", "billingAccountId": "012345-6789AB-CDEF01",
                                            "budgetId": "de72f49d-779b-4945-a127-4d6ce8def0bb"}}


class Event:
    """A CloudEvent as the functions framework hands it to the entry point (`.data`)."""

    def __init__(self, msg: dict[str, Any]) -> None:
        self.data = {"message": msg, "subscription": "projects/demo-project/subscriptions/budget"}


@pytest.fixture
def stack() -> main.Stack:
    return main.Stack(STACK_LABEL, MINE, PROJECT, (REGION,), BUDGET)


def custom(vertex: Any, stack_value: str) -> str:
    body = {"displayName": "train", "labels": {STACK_LABEL: stack_value},
            "jobSpec": custom_job_spec(container_pool({"machineType": "n1-standard-4"}))}
    return str(vertex.projects().locations().customJobs().create(parent=PARENT, body=body).execute()["name"])


def tuned(vertex: Any, stack_value: str) -> str:
    body = render_body(load_job(tuning_training_input(), backend="vertex"), "vertex", "tune_1")
    body["labels"] = {**body.get("labels", {}), STACK_LABEL: stack_value}
    jobs = vertex.projects().locations().hyperparameterTuningJobs()
    return str(jobs.create(parent=PARENT, body=body).execute()["name"])


def state(vertex: Any, name: str) -> str:
    collection = "hyperparameterTuningJobs" if "/hyperparameterTuningJobs/" in name else "customJobs"
    return str(getattr(vertex.projects().locations(), collection)().get(name=name).execute()["state"])


def cancels(emulator: Emulator) -> list[dict[str, Any]]:
    return [r for r in emulator.state.requests() if str(r.get("method", "")).endswith(".cancel")]


def test_the_notification_is_read_as_google_sends_it() -> None:
    notice = main.notice_of(message(1999.99))
    assert (notice.budget, notice.cost, notice.amount, notice.currency) == (BUDGET, 1999.99, 2000.0, "USD")
    assert not notice.spent and main.notice_of(message(2000.0)).spent and main.notice_of(message(2500.5)).spent


def test_spent_cancels_only_the_stack_s_running_jobs_once(emulator: Emulator, vertex_client: Any,
                                                          stack: main.Stack) -> None:
    emulator.state.set_phase_seconds(1e9)  # every job stays QUEUED: running, as far as the budget is concerned
    mine = [custom(vertex_client, MINE), tuned(vertex_client, MINE)]
    theirs = [custom(vertex_client, THEIRS), tuned(vertex_client, THEIRS)]
    clients = main.clients(emulator.url)
    assert main.stop(stack, main.notice_of(message(1800.0, exceeded=0.9)), clients) == []  # under the budget
    assert main.stop(stack, main.notice_of(message(2600.0, budget="another budget")), clients) == []
    assert {state(vertex_client, n) for n in mine + theirs} == {"JOB_STATE_QUEUED"}

    assert sorted(main.stop(stack, main.notice_of(message(2000.0)), clients)) == sorted(mine)
    assert {state(vertex_client, n) for n in mine} <= {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}
    assert {state(vertex_client, n) for n in theirs} == {"JOB_STATE_QUEUED"}  # another stack's jobs are left alone
    assert main.stop(stack, main.notice_of(message(2100.0)), clients) == []  # the next message: nothing again
    assert len(cancels(emulator)) == 2  # one cancel per job of the stack, over both messages


@pytest.mark.parametrize(("token", "page"), [("again", 2), (7, 1)])
def test_a_list_that_never_ends_is_cut_the_jobs_found_cancelled_and_the_run_fails_saying_so(
        emulator: Emulator, vertex_client: Any, stack: main.Stack, token: Any, page: int) -> None:
    emulator.state.set_phase_seconds(1e9)
    mine = [custom(vertex_client, MINE), tuned(vertex_client, MINE)]
    emulator.state.inject_page_token("customJobs.list", token, 50)  # the same token, page after page
    with pytest.raises(RuntimeError) as caught:
        main.stop(stack, main.notice_of(message(2000.0)), main.clients(emulator.url))
    assert str(caught.value) == (f"customJobs.list of {PARENT}: page {page}: nextPageToken {token!r} repeats or is not "
                                 f"text; the list is partial; cancelled the 2 job(s) found: {', '.join(mine)}")
    assert {state(vertex_client, n) for n in mine} <= {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}
    assert len(emulator.state.requests("customJobs.list")) == page and len(cancels(emulator)) == 2


def test_the_entry_point_reads_its_stack_from_the_environment(emulator: Emulator, vertex_client: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    emulator.state.set_phase_seconds(1e9)
    job = custom(vertex_client, MINE)
    for key, value in {"STACK_LABEL": f"{STACK_LABEL}={MINE}", "PROJECT": PROJECT, "REGIONS": f"{REGION}, europe-west4",
                       "BUDGET_DISPLAY_NAME": BUDGET, "AIPLATFORM_ENDPOINT": emulator.url}.items():
        monkeypatch.setenv(key, value)
    main.on_budget(Event(message(1000.0)))
    assert state(vertex_client, job) == "JOB_STATE_QUEUED"
    main.on_budget(Event(message(2000.0)))
    assert state(vertex_client, job) in {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}


def test_the_source_stands_alone() -> None:
    """What is uploaded imports only the standard library, googleapiclient and google.auth (requirements.txt)."""
    folder = Path(main.__file__).parent
    source = (folder / "main.py").read_text()
    imported = {line.split()[1].split(".")[0] for line in source.splitlines()
                if line.strip().startswith(("import ", "from ")) and not line.startswith("    from __future__")}
    assert imported <= {"__future__", "base64", "json", "os", "collections", "dataclasses", "typing",
                        "googleapiclient", "google"}
    assert "google-api-python-client" in (folder / "requirements.txt").read_text()


def test_a_placement_cheapest_job_made_at_a_candidate_outside_its_written_region_is_cancelled(
        emulator: Emulator, vertex_client: Any, tmp_path: Path) -> None:
    """The function looks in every region the stack's jobs may run in (settings.placements.regions, what budget.py
    gives it): a `placement: cheapest` job written in us-central1 and made at its candidate in europe-west4 is
    cancelled."""
    from gcp_training_jobs.resources.settings.judge import judge
    from gcp_training_jobs.resources.settings.placements import regions

    l4 = {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}],
        "scheduling": {"timeout": "7200s"}}
    settings = judge({"gcp:project": PROJECT, "gcp:region": REGION, "gcp-training-jobs:backend": "vertex",
                      "gcp-training-jobs:enableApis": False,
                      "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
                      "gcp-training-jobs:placement": {"regions": [REGION, "europe-west4"],
                                                      "strategies": ["STANDARD", "SPOT"]},
                      "gcp-training-jobs:jobs": {"train": {"jobSpec": l4, "placement": "cheapest"}}}, tmp_path)
    assert settings.jobs["train"].facts.region == "us-central1"
    assert regions(settings) == ["europe-west4", "us-central1"]
    emulator.state.set_phase_seconds(1e9)
    body = {"displayName": "train", "labels": {STACK_LABEL: MINE},
            "jobSpec": custom_job_spec(container_pool({"machineType": "n1-standard-4"}))}
    jobs = vertex_client.projects().locations().customJobs()
    made = str(jobs.create(parent=f"projects/{PROJECT}/locations/europe-west4", body=body).execute()["name"])
    stack = main.Stack(STACK_LABEL, MINE, PROJECT, tuple(regions(settings)), BUDGET)
    assert main.stop(stack, main.notice_of(message(2000.0)), main.clients(emulator.url)) == [made]
    assert state(vertex_client, made) in {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}
