"""`status` as it happened: jobs a program declared (`TrainingJob(...)`, not in the stack file) named by their
resource, jobs the stack's state no longer holds marked so (the state read by `pulumi stack export`: here a fake
`pulumi` on PATH that prints a recorded export and the arguments it was given), a tuning job's trials at once, and
the table a job a line beyond a few jobs (`--wide`: in detail). Against the emulator over real HTTP, on its
clock (the folder's project and run, stack_project's deploy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gcp_training_jobs.cli.job_args import TABLE_AFTER
from gcp_training_jobs.cli.plan.describe import _describe_job
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.core.names import EXIT_OK
from gcp_training_jobs.jobspec.load import judge
from gcp_training_jobs.resources.job_model.inputs import wire_of
from gcp_training_jobs.resources.settings import load_stack_file
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.frozen_clock.stack_project import PHASE, deploy, vertex_stack
from tests.helpers import tuning_training_input

#: The TrainingJob's type in the state, as the engine records a dynamic resource of module `training`.
JOB_TYPE = "pulumi-python:dynamic/training:TrainingJob"
#: A secret output as the export holds it (encrypted): it must never be printed.
CIPHERTEXT = "v1:Zm9vYmFyYmF6cXV4:c2VjcmV0LWNpcGhlcnRleHQtbmV2ZXItcHJpbnRlZA=="


def declared_job(project: Path, emulator: Emulator, name: str, job: dict[str, Any] | None = None,
                 stack: str = "team") -> dict[str, Any]:
    """A job a program declared with `TrainingJob(name, ...)` (not in the stack file), made as `pulumi up` makes
    it: the provider's check and create, its identity the program's (organization/project/stack/name)."""
    settings = load_stack_file(project / "stacks" / f"Pulumi.{stack}.yaml")
    provider = TrainingJobProvider()
    provider.endpoint = emulator.url
    inputs = {"name": name, "project": settings.project, "backend": "vertex",
              "job": job or wire_of(settings.jobs["l4"].job),
              "identity": f"organization/gcp-training-jobs/{stack}/{name}"}
    checked = provider.check({}, inputs)
    assert checked.failures == [], [(f.property, f.reason) for f in checked.failures]
    return dict(provider.create(checked.inputs).outs)


def export_of(stack: str, jobs: dict[str, str]) -> dict[str, Any]:
    """A stack export as `pulumi stack export` prints it (version 3): the stack, the dynamic provider and each
    TrainingJob (resource name -> job id), whose `job` input is a secret."""
    urn = f"urn:pulumi:{stack}::gcp-training-jobs::"
    resources: list[dict[str, Any]] = [
        {"urn": f"{urn}pulumi:pulumi:Stack::gcp-training-jobs-{stack}", "custom": False,
         "type": "pulumi:pulumi:Stack"},
        {"urn": f"{urn}pulumi:providers:pulumi-python::default", "custom": True, "id": "f1e2",
         "type": "pulumi:providers:pulumi-python"}]
    for name, job_id in jobs.items():
        secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": CIPHERTEXT}
        resources.append({"urn": f"{urn}{JOB_TYPE}::{name}", "custom": True, "id": job_id, "type": JOB_TYPE,
                          "inputs": {"name": name, "job": secret},
                          "outputs": {"name": name, "job": secret, "jobId": job_id, "state": "RUNNING"},
                          "parent": f"{urn}pulumi:pulumi:Stack::gcp-training-jobs-{stack}"})
    return {"version": 3, "deployment": {"manifest": {"time": "2026-11-26T20:00:00Z", "version": "v3.259.0"},
                                         "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:abc"}},
                                         "resources": resources}}


def fake_pulumi(project: Path, export: dict[str, Any] | None, exit_code: int = 0) -> Path:
    """A `pulumi` on PATH (the project fixture's bin folder) that records its arguments and folder, and prints
    `export` (or fails with `exit_code` and an error line)."""
    (project / "export.json").write_text(json.dumps(export or {}))
    script = project / "bin" / "pulumi"
    said = f'cat "{project / "export.json"}"' if exit_code == 0 else \
        "echo 'error: no stack named team found' >&2"
    script.write_text(f'#!/bin/sh\necho "$PWD $*" >> "{project / "calls.txt"}"\n{said}\nexit {exit_code}\n')
    script.chmod(0o755)
    return project / "calls.txt"


def test_a_program_declared_job_is_named_by_its_id_stem_without_the_state(project, emulator, run) -> None:
    made = declared_job(project, emulator, "Trainer-A")
    code, out, _ = run("status", "--stack", "team", "--json")
    (job,) = json.loads(out)["jobs"]
    assert code == EXIT_OK and made["jobId"].startswith("trainer_a_")
    assert (job["name"], job["namedBy"], job["inStackFile"], job["inState"]) == ("trainer_a", "job id", False, None)
    _, out, _ = run("status", "--stack", "team")
    assert out.splitlines()[2].startswith("  trainer_a (not in the stack file): QUEUED (job trainer_a_")


def test_the_state_names_a_program_declared_job_and_marks_a_job_it_no_longer_holds(project, emulator, run) -> None:
    made = declared_job(project, emulator, "Trainer-A")
    l4 = deploy(project, emulator, "l4")
    cpu = deploy(project, emulator, "cpu")  # the state no longer holds it (its resource was removed)
    calls = fake_pulumi(project, export_of("team", {"Trainer-A": made["jobId"], "l4": l4["jobId"], "t4": "t4_1"}))
    code, out, err = run("status", "--stack", "team", "--json")
    document = json.loads(out)
    jobs = {job["jobId"]: job for job in document["jobs"]}
    assert code == EXIT_OK and err == "" and document["stateRead"] is True
    assert calls.read_text() == f"{project} stack export --stack team --non-interactive\n"
    assert (jobs[made["jobId"]]["name"], jobs[made["jobId"]]["namedBy"]) == ("Trainer-A", "state")
    assert jobs[made["jobId"]]["inState"] is True and jobs[l4["jobId"]]["inState"] is True
    assert jobs[cpu["jobId"]]["inState"] is False and document["notInState"] == ["cpu"]
    assert document["notFound"] == ["t4"]
    _, out, _ = run("status", "--stack", "team")
    assert f"  cpu: QUEUED, no longer in the stack's state (job {cpu['jobId']}, " in out
    assert f"  Trainer-A (not in the stack file): QUEUED (job {made['jobId']}, " in out
    assert f"  l4: QUEUED (job {l4['jobId']}, " in out
    assert CIPHERTEXT not in out and "1b47061264138c4ac30d75fd1eb44270" not in out


def test_after_a_destroy_every_job_is_marked_and_a_state_not_read_marks_none(project, emulator, run) -> None:
    l4 = deploy(project, emulator, "l4")
    fake_pulumi(project, export_of("team", {}))  # destroyed: the state holds no TrainingJob
    _, out, _ = run("status", "--stack", "team")
    assert f"  l4: QUEUED, no longer in the stack's state (job {l4['jobId']}, " in out
    fake_pulumi(project, None, exit_code=255)
    code, out, err = run("status", "--stack", "team", "--json")
    document = json.loads(out)
    assert code == EXIT_OK and document["stateRead"] is False and document["jobs"][0]["inState"] is None
    assert document["stateUnread"] == "`pulumi stack export --stack team` failed (exit 255): error: no stack named " \
                                      "team found"
    _, out, _ = run("status", "--stack", "team")
    assert "no longer" not in out and out.count("the stack's state was not read") == 1


def test_a_tuning_job_shows_its_trials_at_once_as_plan_words_them(project, emulator, run) -> None:
    tune = vertex_stack(emulator.url)
    tune["config"]["gcp-training-jobs:jobs"] = {"tune": {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "g2-standard-12",
        "masterConfig": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/resnet:1.0",
                         "acceleratorConfig": {"type": "NVIDIA_L4", "count": 1}},
        "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 8,
                            "maxParallelTrials": 4, "params": [
                                {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1}]}}}}
    (project / "stacks" / "Pulumi.tune.yaml").write_text(yaml.safe_dump(tune))
    deploy(project, emulator, "tune", stack="tune")
    code, out, _ = run("status", "--stack", "tune", "--json")
    (job,) = json.loads(out)["jobs"]
    assert job["holds"] == "4 trials at once, each g2-standard-12 x1 + 1 NVIDIA_L4"
    assert job["accelerators"] == {"NVIDIA_L4": 4} and job["machines"][0]["machines"] == 4
    _, out, _ = run("status", "--stack", "tune")
    assert "machines: 4 trials at once, each g2-standard-12 x1 + 1 NVIDIA_L4; accelerators: 4 NVIDIA_L4" in out


def test_more_than_a_few_jobs_are_a_table_a_job_a_line_and_wide_keeps_the_detail(project, emulator, run) -> None:
    names = [f"sweep-{i:02d}" for i in range(TABLE_AFTER + 25)]  # 30 jobs
    made = {name: declared_job(project, emulator, name) for name in names}
    emulator.state.advance(2 * PHASE + 60)
    fake_pulumi(project, export_of("team", {name: job["jobId"] for name, job in made.items()}))
    code, out, _ = run("status", "--stack", "team")
    lines = out.splitlines()
    # the headline, the heading, a job a line, and the stack file's three jobs the API does not hold
    assert code == EXIT_OK and len(lines) == 2 + len(names) + 3
    assert lines[1].split() == ["NAME", "STATE", "REGION", "MACHINES", "AND", "ACCELERATORS", "$/H", "STARTED"]
    row = lines[2].split()
    assert row[:7] == ["sweep-00", "(not", "in", "the", "stack", "file)", "RUNNING"]
    assert row[7:] == ["us-central1", "g2-standard-8", "x1", "+", "1", "NVIDIA_L4", "$0.61/h", row[-1]]
    wide = run("status", "--stack", "team", "--wide")[1]
    assert wide.count("      console: ") == len(names)
    document = json.loads(run("status", "--stack", "team", "--json")[1])
    assert row[-1] == document["jobs"][0]["startTime"] and document["jobs"][0]["name"] == "sweep-00"
    assert all(job["consoleUrl"] == "https://console.cloud.google.com/agent-platform/locations/us-central1/"
               f"training/{job['apiId']}?project=my-proj" for job in document["jobs"])  # as Vertex AI's SDK links it


def test_plan_words_a_tuning_jobs_trials_at_once_as_status_does() -> None:
    """plan's lines of the same tuning job: the one wording (JobFacts.machines_text), times its trials at once."""
    job = tuning_training_input(maxParallelTrials=4)
    job["trainingInput"].update(masterType="g2-standard-12", masterConfig={
        **job["trainingInput"]["masterConfig"], "acceleratorConfig": {"type": "NVIDIA_L4", "count": 1}})
    judged = judge(job, backend="vertex")
    assert not judged.problems and judged.facts.parallel_runs == 4
    lines = dict(_describe_job({"backend": "vertex", "project": "my-proj", "job": job}, judged))
    assert lines["holds"] == "4 trials at once, each g2-standard-12 x1 + 1 NVIDIA_L4"
    assert lines["accelerators"] == "4 NVIDIA_L4"
