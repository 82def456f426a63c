"""`status`, `logs` and `spend` on a stack's jobs, against the emulator over real HTTP: a project with its own
Pulumi.yaml and stack files, jobs made by the TrainingJob provider as `pulumi up` makes them (one of them as the
release made it, before jobs carried the stack label), read back from the API, never from Pulumi's state.

The commands run in-process through the command line's own parser; their clock is the emulator's (its jobs'
time), and `logs --follow` sleeps by moving the emulator's clock, never the real one."""

from __future__ import annotations

import json

import pytest
import yaml

from gcp_training_jobs.cli.main import main
from gcp_training_jobs.emulator.logging_v2 import TRACEBACK
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, STACK_LABEL
from gcp_training_jobs.jobspec.review.cost import estimate_resource
from gcp_training_jobs.resources.job_model import identity
from gcp_training_jobs.resources.settings import load_stack_file
from tests.frozen_clock.stack_project import IMAGE, L4_SPOT_USD_PER_HOUR, PHASE, deploy, pool
from tests.helpers import rest


def test_status_shows_every_job_of_the_stack_with_its_state_cost_and_console(project, emulator, run) -> None:
    l4 = deploy(project, emulator, "l4")
    deploy(project, emulator, "cpu")
    emulator.state.advance(2 * PHASE + 900)  # both 15 minutes into their run
    code, out, err = run("status", "--stack", "team")
    assert code == EXIT_OK and err == ""
    assert out.splitlines()[0].startswith("stack team (vertex, project my-proj): 2 jobs; cost so far $")
    block = out.split("  l4: ")[1]
    api_id = l4["resourceName"].rsplit("/", 1)[1]  # the number Vertex AI, gcloud and the emulator's controls take
    assert api_id.isdigit() and block.startswith(f"RUNNING (job {l4['jobId']}, id {api_id}, us-central1)")
    assert "machines: g2-standard-8 x1 + 1 NVIDIA_L4; accelerators: 1 NVIDIA_L4" in block
    assert out.splitlines()[1] == "  the stack's state was not read (no pulumi CLI on PATH): no job is marked as in " \
                                  "it or not"
    assert f"running for 15 min; cost so far ${L4_SPOT_USD_PER_HOUR / 4:.2f} ($0.61/h, SPOT, at Spot rates)" in block
    assert f"console: {l4['consoleUrl']}" in block
    assert "  t4: not found in the API (not created yet, or its job was deleted)" in out


def test_status_exits_1_when_a_job_failed_and_json_says_which(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    cpu = deploy(project, emulator, "cpu")
    emulator.state.advance(2 * PHASE + 60)
    emulator.state.fail_job(cpu["resourceName"], "The replica workerpool0-0 exited with a non-zero status of 1.")
    code, out, _ = run("status", "--stack", "team")
    assert code == EXIT_INVALID
    assert "error: The replica workerpool0-0 exited with a non-zero status of 1." in out.split("  cpu: FAILED")[1]
    code, out, _ = run("status", "--stack", "team", "--json")
    document = json.loads(out)
    assert code == EXIT_INVALID and document["failed"] == ["cpu"] and document["notFound"] == ["t4"]
    jobs = {job["name"]: job for job in document["jobs"]}
    assert jobs["cpu"]["state"] == "FAILED" and jobs["cpu"]["runSeconds"] == 60
    assert jobs["l4"]["accelerators"] == {"NVIDIA_L4": 1} and jobs["l4"]["cost"]["runsAs"] == "SPOT, at Spot rates"
    assert document["costUsd"] == round(sum(job["cost"]["usd"] for job in jobs.values()), 2)


def test_status_shows_a_paused_job_and_exits_0(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    cpu = deploy(project, emulator, "cpu")
    emulator.state.advance(2 * PHASE + 60)
    emulator.state.pause_job(cpu["resourceName"])
    code, out, _ = run("status", "--stack", "team")
    assert code == EXIT_OK and ": 2 jobs, 1 PAUSED; cost so far" in out.splitlines()[0]
    api_id = cpu["resourceName"].rsplit("/", 1)[1]
    assert out.split("  cpu: ")[1].startswith(f"PAUSED (job {cpu['jobId']}, id {api_id}, us-central1)")
    code, out, _ = run("status", "--stack", "team", "--json")
    document = json.loads(out)
    assert code == EXIT_OK and document["paused"] == ["cpu"] and document["failed"] == []


def test_a_job_made_before_the_stack_label_is_found_by_its_identity(project, emulator, run, monkeypatch) -> None:
    with monkeypatch.context() as release:  # the release's labels: identity, spec and id, no stack label
        release.setattr(identity, "stack_label_of", lambda identity: {})
        old = deploy(project, emulator, "t4")
    new = deploy(project, emulator, "l4")
    labels = {entry["job"]["displayName"]: entry["job"]["labels"] for entry in emulator.state.jobs()}
    assert STACK_LABEL not in labels[old["jobId"]] and STACK_LABEL in labels[new["jobId"]]
    _, out, _ = run("status", "--stack", "team", "--json")
    assert sorted(job["name"] for job in json.loads(out)["jobs"]) == ["l4", "t4"]
    _, out, _ = run("status", "--stack", "team", "--json", "--organization", "another-org")
    assert [job["name"] for job in json.loads(out)["jobs"]] == ["l4"]  # another identity: only the labelled one


def test_a_replaced_job_is_history_and_a_job_gone_from_the_file_still_shows(project, emulator, run) -> None:
    first = deploy(project, emulator, "cpu")
    emulator.state.fail_job(first["resourceName"])
    emulator.state.advance(60)  # (the frozen clock: a job made later has a later createTime)
    second = deploy(project, emulator, "cpu")  # the same spec again: its second attempt
    path = project / "stacks" / "Pulumi.team.yaml"
    document = yaml.safe_load(path.read_text())
    deploy(project, emulator, "l4")
    del document["config"]["gcp-training-jobs:jobs"]["l4"]  # l4 left the stack file; its job runs on
    path.write_text(yaml.safe_dump(document))
    code, out, _ = run("status", "--stack", "team", "--json")
    jobs = {job["jobId"]: job for job in json.loads(out)["jobs"]}
    assert code == EXIT_OK  # the FAILED job is the history of cpu, whose job now is queued
    assert jobs[second["jobId"]]["attempt"] == 2
    assert jobs[second["jobId"]]["earlier"] == [{"jobId": first["jobId"], "state": "FAILED", "region": "us-central1"}]
    (gone,) = [job for job in jobs.values() if not job["inStackFile"]]  # named by its id's stem, the resource's
    assert gone["name"] == "l4" and gone["namedBy"] == "job id" and gone["state"] == "QUEUED"


def test_every_stack_unknown_stacks_and_a_stack_without_jobs(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    code, out, _ = run("status", "--all")
    assert code == EXIT_OK
    assert "stack empty (vertex, project my-proj): no jobs (its stack file declares none, and the API holds " \
           "none of its)" in out and "stack team (vertex, project my-proj): 1 job;" in out
    code, out, err = run("status", "--stack", "nope")
    assert code == EXIT_UNREADABLE and out == ""
    folder = project / "stacks"
    assert err == f"status: stack nope: unknown stack 'nope': no {folder}/Pulumi.nope.yaml; stacks in {folder}: " \
                  "empty, team\n"


def test_an_api_error_names_the_api_and_its_status_without_a_traceback(project, emulator, run) -> None:
    emulator.state.inject_faults(403, 1, "customJobs.list", message="Permission 'aiplatform.customJobs.list' denied")
    code, out, err = run("status", "--stack", "team")
    assert code == EXIT_UNREADABLE and out == ""
    assert err == ("status: stack team: Vertex AI (aiplatform.googleapis.com) list: HTTP 403 PERMISSION_DENIED: "
                   "Permission 'aiplatform.customJobs.list' denied\n")


def test_an_invalid_stack_file_is_named_field_by_field(project, run) -> None:
    path = project / "stacks" / "Pulumi.team.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["gcp-training-jobs:jobs"]["l4"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"][
        "acceleratorCount"] = 3
    path.write_text(yaml.safe_dump(document))
    code, out, err = run("status", "--stack", "team")
    assert code == EXIT_INVALID and out == ""
    assert "gcp-training-jobs:jobs.l4.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount" in err
    assert "Traceback" not in err


# -- logs ---------------------------------------------------------------------------------------------------

def test_logs_prints_a_jobs_lines_its_tail_and_since(project, emulator, run) -> None:
    l4 = deploy(project, emulator, "l4")
    emulator.state.advance(2 * PHASE + 35)
    code, out, err = run("logs", "--stack", "team", "l4")
    lines = out.splitlines()
    assert code == EXIT_OK and err == ""
    assert [line.split(" ", 3)[2:] for line in lines] == [
        ["service", "Waiting for job to be provisioned."], ["service", "Job is running."],
        ["workerpool0-0", f"Running {IMAGE} --epochs=5"], ["workerpool0-0", "step 1: loss=0.5000"],
        ["workerpool0-0", "step 2: loss=0.3333"], ["workerpool0-0", "step 3: loss=0.2500"]]
    assert run("logs", "--stack", "team", "l4", "--tail", "2")[1].splitlines() == lines[-2:]
    assert run("logs", "--stack", "team", "l4", "--since", "20s")[1].splitlines() == lines[-2:]  # steps at 20, 30 s
    job_number = l4["resourceName"].rsplit("/", 1)[-1]
    assert run("logs", "--stack", "team", job_number, "--tail", "1")[1].splitlines() == lines[-1:]  # by its id


def test_logs_follow_until_the_job_ends_and_exit_1_when_it_failed(project, emulator, run) -> None:
    cpu = deploy(project, emulator, "cpu")
    emulator.state.set_phase_seconds(100)
    code, out, _ = run("logs", "--stack", "team", "cpu", "--follow")
    assert code == EXIT_OK and out.splitlines()[-1].endswith("INFO service Job completed successfully.")
    assert len(out.splitlines()) == 2 + 1 + 10 + 1  # service, trainer's first line, 10 steps, the end
    emulator.state.fail_job(deploy(project, emulator, "l4")["resourceName"])
    code, out, _ = run("logs", "--stack", "team", "l4", "--follow", "--tail", "3")
    assert code == EXIT_INVALID and "RuntimeError" not in out  # failed before it ran: no traceback, its error
    assert out.splitlines()[-1].endswith("ERROR service Job failed (failure injected by the emulator).")
    assert cpu["jobId"] != ""


def test_a_waited_style_failure_shows_the_traceback_in_the_tail(project, emulator, run) -> None:
    deploy(project, emulator, "cpu")
    emulator.state.advance(2 * PHASE + 10)
    (entry,) = emulator.state.jobs()
    emulator.state.fail_job(entry["name"], "The replica workerpool0-0 exited with a non-zero status of 1.")
    _, out, _ = run("logs", "--stack", "team", "cpu", "--tail", str(len(TRACEBACK) + 1))
    assert [line.split(" ", 3)[3] for line in out.splitlines()] == \
        [*TRACEBACK, "The replica workerpool0-0 exited with a non-zero status of 1."]


def test_logs_of_an_unknown_job_names_the_jobs(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    deploy(project, emulator, "cpu")
    code, out, err = run("logs", "--stack", "team", "gpu")
    assert (code, out) == (EXIT_UNREADABLE, "")
    assert err == "logs: stack team has no job 'gpu'; its jobs: cpu, l4\n"


def test_a_logging_error_names_the_api_and_its_status(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    emulator.state.inject_faults(403, 1, "entries.list", message="Permission 'logging.logEntries.list' denied")
    code, _, err = run("logs", "--stack", "team", "l4")
    assert code == EXIT_UNREADABLE
    assert err == ("logs: Cloud Logging (logging.googleapis.com) entries.list: HTTP 403 PERMISSION_DENIED: "
                   "Permission 'logging.logEntries.list' denied\n")


# -- spend --------------------------------------------------------------------------------------------------

def test_spend_per_job_per_label_and_for_the_stack_add_up(project, emulator, run) -> None:
    deploy(project, emulator, "l4")
    deploy(project, emulator, "cpu")
    deploy(project, emulator, "t4")
    emulator.state.advance(3 * PHASE + 7200)  # each ran 30 minutes and ended long ago
    code, out, _ = run("spend", "--stack", "team", "--by", "team", "--json")
    document = json.loads(out)
    assert code == EXIT_OK and document["complete"] and document["jobCount"] == 3
    jobs = {job["name"]: job for job in document["jobs"]}
    assert jobs["l4"]["hours"] == 0.5 and jobs["l4"]["rate"] == "spot"
    assert jobs["l4"]["costUsd"] == round(L4_SPOT_USD_PER_HOUR / 2, 2)
    assert jobs["t4"]["rate"] == "on_demand" and jobs["t4"]["labelValue"] == "(none)"
    cents = [round(job["costUsd"] * 100) for job in jobs.values()]
    assert round(document["costUsd"] * 100) == sum(cents)
    groups = {group["value"]: group for group in document["byLabel"]["groups"]}
    assert sorted(groups) == ["(none)", "data", "vision"]
    assert groups["vision"]["costUsd"] == jobs["l4"]["costUsd"] and groups["data"]["costUsd"] == jobs["cpu"]["costUsd"]
    assert sum(round(g["costUsd"] * 100) for g in groups.values()) == sum(cents)


def test_spend_text_csv_and_its_window(project, emulator, run) -> None:
    deploy(project, emulator, "cpu")
    emulator.state.advance(3 * PHASE + 86400 * 2)  # ran 30 min two days ago
    deploy(project, emulator, "l4")
    emulator.state.advance(2 * PHASE + 900)  # running for 15 minutes now
    _, out, _ = run("spend", "--stack", "team", "--since", "1d")
    assert "  l4 " in out and "  cpu " not in out  # the cpu job ran before the window
    assert f"0.25 h x $0.61/h (Spot) = ${L4_SPOT_USD_PER_HOUR / 4:.2f}" in out
    assert out.splitlines()[-1] == f"stack team: ${L4_SPOT_USD_PER_HOUR / 4:.2f} (1 job)"
    _, out, _ = run("spend", "--stack", "team", "--by", "team", "--csv")
    rows = out.splitlines()
    assert rows[0] == "stack,name,job_id,state,region,create_time,rate,usd_per_hour,hours,cost_usd,complete,label:team"
    assert [row.split(",")[1] for row in rows[1:]] == ["cpu", "l4"]
    assert rows[2].split(",")[-4:] == ["0.25", f"{L4_SPOT_USD_PER_HOUR / 4:.2f}", "true", "vision"]


def test_bad_options_are_usage_errors_naming_what_is_allowed(project, capsys) -> None:
    for argv, says in ((["spend", "--stack", "team", "--since", "yesterday"], "allowed: a span back from now"),
                       (["spend", "--stack", "team", "--by", "Team"], "is not a label key"),
                       (["logs", "--stack", "team", "l4", "--tail", "-2"], "allowed: a whole number of lines")):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2 and says in capsys.readouterr().err


def test_status_says_where_a_fallback_or_a_retry_made_a_job(project, emulator, run, vertex_client) -> None:
    """A job made on a fallback placement (here in another region), as a retry, carries labels saying so (runs):
    status looks in its fallbacks' regions too, and shows them."""
    path = project / "stacks" / "Pulumi.team.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["gcp-training-jobs:jobs"]["l4"]["fallbacks"] = [{"region": "us-east4"}]
    path.write_text(yaml.safe_dump(document))
    labels = {**identity.stack_label("gcp-training-jobs", "team"), "pulumi-job": "l4_0000abcd",
              **identity.resource_label("organization/gcp-training-jobs/team/l4"),
              "pulumi-placement": "1", "pulumi-retry": "1"}
    body = {"displayName": "l4_0000abcd", "labels": labels,
            "jobSpec": {"workerPoolSpecs": [pool("g2-standard-8", "NVIDIA_L4", 1)], "scheduling": {"strategy": "SPOT"}}}
    vertex_client.projects().locations().customJobs().create(parent="projects/my-proj/locations/us-east4",
                                                             body=body).execute()
    code, out, _ = run("status", "--stack", "team", "--json")
    (job,) = json.loads(out)["jobs"]
    assert code == EXIT_OK and (job["name"], job["region"]) == ("l4", "us-east4")
    assert (job["placement"], job["retry"]) == (1, 1)
    _, out, _ = run("status", "--stack", "team")
    assert "placement 1 (fallbacks[0], not the job as written); retry 1 (made again after a failure of Google's)" \
        in out


# -- spend of a persistent resource ------------------------------------------------------------------------

PARENT = "projects/my-proj/locations/us-central1"
T4 = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 2}
POOL_STACK = {"config": {
    "gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
    "gcp-training-jobs:enableApis": False,
    "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
    "gcp-training-jobs:persistentResources": {"team-pool": {"resourcePools": [{"machineSpec": dict(T4),
                                                                               "replicaCount": 2}]}},
    "gcp-training-jobs:jobs": {"on-pool": {"jobSpec": {
        "persistentResourceId": "team-pool", "scheduling": {"timeout": "3600s"},
        "workerPoolSpecs": [{"machineSpec": dict(T4), "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}]}}},
}}


def test_spend_counts_a_persistent_resource_for_the_hours_it_existed_and_its_jobs_at_zero(
        project, emulator, run) -> None:
    config = json.loads(json.dumps(POOL_STACK))
    config["config"]["gcp-training-jobs:apiEndpoint"] = emulator.url
    (project / "stacks" / "Pulumi.pool.yaml").write_text(yaml.safe_dump(config))
    status, answer = rest(emulator, "POST", f"{PARENT}/persistentResources?persistentResourceId=team-pool",
                          {"resourcePools": [{"machineSpec": T4, "replicaCount": "2"}]})  # as the stack makes it
    assert status == 200, answer
    emulator.state.advance(PHASE)  # RUNNING
    deploy(project, emulator, "on-pool", stack="pool")
    emulator.state.advance(3 * PHASE + 1800)  # the job ran 30 minutes on it and ended; the resource is 2.5 h old
    declared = load_stack_file(project / "stacks" / "Pulumi.pool.yaml").resources["team-pool"]
    rate = estimate_resource(declared).on_demand.known  # the price plan says for it (plan --json
    # cost.persistentResources), 2 x n1-standard-8 + 2 T4 on demand
    code, out, _ = run("spend", "--stack", "pool", "--json")
    document = json.loads(out)
    (held,) = document["persistentResources"]
    (job,) = document["jobs"]
    assert code == EXIT_OK and document["complete"] and document["resourceCount"] == 1
    assert held["id"] == "team-pool" and held["state"] == "RUNNING" and held["declared"] and held["jobs"] == ["on-pool"]
    assert held["hours"] == 2.5 and held["usdPerHour"] == round(rate, 4)
    assert held["costUsd"] == round(2.5 * rate, 2) and "createTime to now" in held["hoursCounted"]
    assert held["is"].startswith("an estimate") and held["isNot"].startswith("not the invoice")
    assert job["name"] == "on-pool" and job["hours"] == 0.5 and job["costUsd"] == 0.0  # its machines: the resource's
    assert document["costUsd"] == held["costUsd"]
    _, out, _ = run("spend", "--stack", "pool", "--by", "team", "--json")  # the resource has no label team
    assert json.loads(out)["byLabel"]["groups"] == [{"value": "(none)", "costUsd": held["costUsd"], "complete": True,
                                                     "jobCount": 1, "resourceCount": 1}]
    _, out, _ = run("spend", "--stack", "pool", "--since", "1h")  # only the last hour of it (the job's run ended in it)
    assert f"  persistent resource team-pool RUNNING us-central1: 1.00 h x ${rate:.2f}/h (on demand, while it " \
           f"exists; jobs on it: on-pool, $0.00/h) = ${rate:.2f}" in out
    assert "  on-pool " in out and "0.50 h x $0.00/h" in out
    assert out.splitlines()[-1] == f"stack pool: ${rate:.2f} (1 job and 1 persistent resource)"
    status, answer = rest(emulator, "DELETE", f"{PARENT}/persistentResources/team-pool")
    assert status == 200, answer
    emulator.state.advance(PHASE)
    code, out, _ = run("spend", "--stack", "pool", "--since", "1h")  # deleted: the API holds none of it
    assert code == EXIT_OK and "  persistent resource team-pool us-central1: not found: deleted, or never made" in out
    assert out.splitlines()[1] == "  no job of the stack ran in that time"
