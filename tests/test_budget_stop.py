"""The budget's stop function (gcp_training_jobs/resources/budget_stop/main.py, the source `budget.enforce` deploys),
against the emulator over real HTTP with Google's notification format: the Pub/Sub message's `data` is base64 JSON
(budgetDisplayName, costAmount, costIntervalStart, budgetAmount, alertThresholdExceeded, currencyCode). It cancels the
stack's queued and running custom and tuning jobs once the cost reaches the budget, once, and no other stack's. A
forged or broken message (another budget's attributes, amounts missing, infinite, negative or not numbers, data that
is not base64, UTF-8 or a JSON object) is logged and ignored through the entry point, never raised; each list asks the
emulator only for the jobs' name, state and labels, so a job's environment never reaches the function."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.partial import parse, select
from gcp_training_jobs.jobspec.core.names import STACK_LABEL
from gcp_training_jobs.jobspec.load import load_job, render_body
from gcp_training_jobs.resources.budget_stop import main
from tests.helpers import container_pool, custom_job_spec, tuning_training_input

PROJECT, REGION = "demo-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
MINE, THEIRS = "a" * 20, "b" * 20
BUDGET = "gcp-training-jobs prod"
BUDGET_ID, ACCOUNT = "de72f49d-779b-4945-a127-4d6ce8def0bb", "012345-6789AB-CDEF01"
SECRET = "hunter2-not-for-the-budget"


def message(cost: float, amount: float = 2000.0, budget: str = BUDGET, exceeded: float | None = 1.0) -> dict[str, Any]:
    """A Pub/Sub message as the Budget API publishes it (Google's notification format)."""
    data: dict[str, Any] = {"budgetDisplayName": budget, "costAmount": cost, "costIntervalStart":
                            "2026-11-01T08:00:00Z", "budgetAmount": amount, "budgetAmountType": "SPECIFIED_AMOUNT",
                            "currencyCode": "USD"}
    if exceeded is not None:
        data["alertThresholdExceeded"] = exceeded
    return raw(json.dumps(data).encode())


def raw(data: bytes | str, **attributes: Any) -> dict[str, Any]:
    """A message whose data is these bytes (base64-encoded as Pub/Sub carries them), or this text as it stands."""
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    return {"data": encoded, "attributes": {"schemaVersion": "1.0", "billingAccountId": ACCOUNT, "budgetId": BUDGET_ID,
                                            **attributes}}


def figures(**data: Any) -> dict[str, Any]:
    """A spent notification of the stack's budget with these fields instead (None: the field left out)."""
    fields = {"budgetDisplayName": BUDGET, "costAmount": 2500.0, "budgetAmount": 2000.0, "currencyCode": "USD",
              "costIntervalStart": "2026-11-01T08:00:00Z", **data}
    return raw(json.dumps({k: v for k, v in fields.items() if v is not None}).encode())


#: Messages the function must ignore, with what its log line says. Each would cancel the stack's jobs if it were
#: read as 0 >= 0, as infinity, or as a negative budget.
BROKEN: dict[str, tuple[Any, str]] = {
    "no amounts": (raw(json.dumps({"budgetDisplayName": BUDGET}).encode()), "no costAmount"),
    "no budget amount": (figures(budgetAmount=None), "no budgetAmount"),
    "Infinity": (raw(f'{{"budgetDisplayName": "{BUDGET}", "costAmount": Infinity, "budgetAmount": 1}}'.encode()),
                 "costAmount is not a finite number"),
    "NaN": (raw(f'{{"budgetDisplayName": "{BUDGET}", "costAmount": 5, "budgetAmount": NaN}}'.encode()),
            "budgetAmount is not a finite number"),
    "1e999": (raw(f'{{"budgetDisplayName": "{BUDGET}", "costAmount": 1e999, "budgetAmount": 1}}'.encode()),
              "costAmount is not a finite number"),
    "a 400-digit cost": (figures(costAmount=10 ** 400), "costAmount is not a finite number"),
    "a negative budget": (figures(costAmount=0, budgetAmount=-5), "budgetAmount is negative (-5.0)"),
    "a zero budget": (figures(costAmount=0, budgetAmount=0), "budgetAmount is 0"),
    "a negative cost": (figures(costAmount=-1), "costAmount is negative (-1.0)"),
    "a string amount": (figures(costAmount="2500"), "costAmount is text, not a number"),
    "an object amount": (figures(budgetAmount={"units": "2000"}), "budgetAmount is an object, not a number"),
    "a true amount": (figures(costAmount=True), "costAmount is true or false, not a number"),
    "a list amount": (figures(costAmount=[2500]), "costAmount is a list, not a number"),
    "bad base64": (raw("!!not base64!!"), "the data is not base64"),
    "not UTF-8": (raw(b"\xff\xfe{\x00"), "the data is not UTF-8"),
    "not JSON": (raw(b"budget spent"), "the data is not JSON"),
    "a JSON list": (raw(b"[2500, 2000]"), "the data is a list, not a JSON object"),
    "deep nesting": (raw(b"[" * 100_000), "the data is not JSON"),
    "no data": ({"attributes": {}}, "no data"),
    "data not text": ({"data": 12}, "the data is int, not base64 text"),
    "a list message": ([1, 2], "the message is a list, not an object"),
    "attributes not an object": ({"data": figures()["data"], "attributes": ["x"]},
                                 "the attributes are a list, not an object"),
    "another schema": (raw(figures()["data"], schemaVersion="2.0"), "schemaVersion '2.0' is not 1.0"),
    "a numeric display name": (figures(budgetDisplayName=7), "data budgetDisplayName is int, not text"),
    "no display name": (figures(budgetDisplayName=None), "no budgetDisplayName"),
}
#: Well-formed spent messages that are not this stack's budget's.
FORGED: dict[str, tuple[dict[str, Any], str]] = {
    "another budget's name": (figures(budgetDisplayName="another budget"),
                              "budgetDisplayName 'another budget' is not this stack's budget"),
    "another budget's id": (raw(figures()["data"], budgetId="forged"),
                            "budgetId 'forged' is not this stack's budget's"),
    "another billing account": (raw(figures()["data"], billingAccountId="000000-000000-000000"),
                                "billingAccountId '000000-000000-000000' is not this stack's budget's"),
}


class Event:
    """A CloudEvent as the functions framework hands it to the entry point (`.data`)."""

    def __init__(self, msg: dict[str, Any]) -> None:
        self.data = {"message": msg, "subscription": "projects/demo-project/subscriptions/budget"}


@pytest.fixture
def stack() -> main.Stack:
    return main.Stack(STACK_LABEL, MINE, PROJECT, (REGION,), BUDGET, BUDGET_ID, ACCOUNT)


def custom(vertex: Any, stack_value: str) -> str:
    pool = container_pool({"machineType": "n1-standard-4"})
    pool["containerSpec"]["env"] = [{"name": "API_TOKEN", "value": SECRET}]
    body = {"displayName": "train", "labels": {STACK_LABEL: stack_value}, "jobSpec": custom_job_spec(pool)}
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


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_message_is_ignored_saying_why(case: str) -> None:
    broken, why = BROKEN[case]
    with pytest.raises(main.Ignored) as caught:
        main.notice_of(broken)
    assert str(caught.value) == why


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_message_of_another_budget_is_not_the_stack_s(case: str, stack: main.Stack) -> None:
    forged, why = FORGED[case]
    notice = main.notice_of(forged)
    assert notice.spent and main.foreign(stack, notice) == why and not main.decide(stack, notice)


def test_a_message_without_attributes_is_judged_by_its_display_name(stack: main.Stack) -> None:
    """Google sends budgetId and billingAccountId; a message without them is held to the budget's name alone."""
    bare = {"data": figures()["data"]}
    assert main.decide(stack, main.notice_of(bare))
    assert not main.decide(main.Stack(STACK_LABEL, MINE, PROJECT, (REGION,), ""), main.notice_of(bare))


def test_through_the_entry_point_forged_and_broken_messages_cancel_nothing_and_say_why(
        emulator: Emulator, vertex_client: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    emulator.state.set_phase_seconds(1e9)
    job = custom(vertex_client, MINE)
    for key, value in {"STACK_LABEL": f"{STACK_LABEL}={MINE}", "PROJECT": PROJECT, "REGIONS": REGION,
                       "BUDGET_DISPLAY_NAME": BUDGET, "BUDGET_ID": BUDGET_ID, "BILLING_ACCOUNT": ACCOUNT,
                       "AIPLATFORM_ENDPOINT": emulator.url}.items():
        monkeypatch.setenv(key, value)
    for bad, why in [*BROKEN.values(), *FORGED.values()]:
        main.on_budget(Event(bad))  # never raises
        assert capsys.readouterr().out == f"budget stop: message ignored: {why}\n"
    main.on_budget({"data": {"subscription": "s"}})
    assert capsys.readouterr().out == "budget stop: message ignored: the event carries no Pub/Sub message\n"
    assert state(vertex_client, job) == "JOB_STATE_QUEUED" and cancels(emulator) == []
    assert emulator.state.requests("customJobs.list") == []  # nothing listed for a message it does not act on

    main.on_budget(Event(figures()))  # the stack's own, spent: cancels
    assert state(vertex_client, job) in {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}
    assert SECRET not in capsys.readouterr().out


def test_the_lists_ask_only_for_name_state_and_labels_so_no_job_env_reaches_the_function(
        emulator: Emulator, vertex_client: Any, stack: main.Stack) -> None:
    emulator.state.set_phase_seconds(1e9)
    mine = [custom(vertex_client, MINE), tuned(vertex_client, MINE)]
    full = vertex_client.projects().locations().customJobs().get(name=mine[0]).execute()
    assert SECRET in json.dumps(full)  # the job does carry the environment a full read would return
    read: list[Any] = []
    clients = main.clients(emulator.url)

    class Recording:
        """A collection whose list answers are kept as the function read them."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def list(self, **kwargs: Any) -> Any:
            request = self.inner.list(**kwargs)
            execute = request.execute
            request.execute = lambda: read.append(execute()) or read[-1]
            return request

        def cancel(self, **kwargs: Any) -> Any:
            return self.inner.cancel(**kwargs)

    found, unread = main.running_jobs(stack, lambda region, name: Recording(clients(region, name)))
    assert sorted(name for _, name in found) == sorted(mine) and unread == []
    assert read and SECRET not in json.dumps(read)
    assert {key for page in read for job in next(iter(page.values())) for key in job} == {"name", "state", "labels"}
    lists = emulator.state.requests("customJobs.list") + emulator.state.requests("hyperparameterTuningJobs.list")
    assert {r["query"]["fields"] for r in lists} == {main.list_fields("customJobs"),
                                                     main.list_fields("hyperparameterTuningJobs")}


def test_the_emulator_answers_a_partial_response_as_google_does(emulator: Emulator, vertex_client: Any) -> None:
    name = custom(vertex_client, MINE)
    url = f"{emulator.url}/v1/{name}?fields=name,jobSpec/workerPoolSpecs(machineSpec),labels"
    with urllib.request.urlopen(url, timeout=30) as answer:
        got = json.load(answer)
    assert got == {"name": name, "labels": {STACK_LABEL: MINE},
                   "jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"}}]}}
    assert select({"a": [{"b": 1, "c": 2}], "d": 3}, parse("a(b)")) == {"a": [{"b": 1}]}
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{emulator.url}/v1/{name}?fields=name(", timeout=30)
    assert refused.value.code == 400


def test_the_source_stands_alone() -> None:
    """What is uploaded imports only the standard library, googleapiclient and google.auth (requirements.txt)."""
    folder = Path(main.__file__).parent
    source = (folder / "main.py").read_text()
    imported = {line.split()[1].split(".")[0] for line in source.splitlines()
                if line.strip().startswith(("import ", "from ")) and not line.startswith("    from __future__")}
    assert imported <= {"__future__", "base64", "binascii", "json", "math", "os", "collections", "dataclasses",
                        "typing", "googleapiclient", "google"}
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
