"""A job on a persistent resource against the emulator over real HTTP: the resource created through the REST API (as
gcloud does), `plan --online`'s check that a resource the stack does not declare exists, is RUNNING and has pools
the job fits (through backends.persistent_resources, the one transport), and the provider's create of a job on it;
a job that does not fit a declared resource is refused offline, and the emulator refuses the same job on the same
resource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.plan.quota import online_review
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.resources.settings.judge import judge
from tests.helpers import checked, provider_props, rest, spec_props

ROOT = Path(__file__).resolve().parents[1]
PROJECT, REGION = "my-proj", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
T4 = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 2}
IMAGE = "us-docker.pkg.dev/p/r/t:1"


def make_resource(emulator: Emulator, resource_id: str, replicas: int = 2) -> None:
    """`gcloud ai persistent-resources create`'s request: POST .../persistentResources?persistentResourceId=ID."""
    body = {"displayName": resource_id, "resourcePools": [{"machineSpec": T4, "replicaCount": str(replicas)}]}
    status, answer = rest(emulator, "POST", f"{PARENT}/persistentResources?persistentResourceId={resource_id}", body)
    assert status == 200, answer


def settle(emulator: Emulator) -> None:
    emulator.state.set_phase_seconds(60.0)
    emulator.state.advance(120.0)


def job_spec(resource_id: str, replicas: int) -> dict[str, Any]:
    return {"persistentResourceId": resource_id, "scheduling": {"timeout": "3600s"}, "workerPoolSpecs": [
        {"machineSpec": dict(T4), "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}},
        {"machineSpec": dict(T4), "replicaCount": str(replicas), "containerSpec": {"imageUri": IMAGE}}]}


def stack_config(emulator: Emulator, resource_id: str, replicas: int = 1,
                 declared: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "gcp:project": PROJECT, "gcp-training-jobs:backend": "vertex", "gcp-training-jobs:region": REGION,
        "gcp-training-jobs:apiEndpoint": emulator.url,
        "gcp-training-jobs:jobs": {"on-pool": {"jobSpec": job_spec(resource_id, replicas)}}}
    if declared is not None:
        config["gcp-training-jobs:persistentResources"] = declared
    return config


def test_plan_online_checks_an_undeclared_resource_exists_and_runs(emulator: Emulator) -> None:
    make_resource(emulator, "team-pool")
    settings = judge(stack_config(emulator, "team-pool"), ROOT)
    provisioning = online_review(settings)
    assert provisioning.problems == [f"job on-pool: persistent resource {PARENT}/persistentResources/team-pool is "
                                     "PROVISIONING; allowed: a RUNNING one (Vertex AI refuses a job on a resource "
                                     "that is not RUNNING)"]
    settle(emulator)
    running = online_review(settings)
    assert running.problems == []
    assert "persistent resource team-pool (us-central1): RUNNING" in running.lines
    missing = online_review(judge(stack_config(emulator, "nowhere"), ROOT))
    assert missing.problems and "persistentResources/nowhere does not exist" in missing.problems[0]
    gets = [r for r in emulator.state.requests() if "persistentResources/" in str(r.get("path", ""))]
    assert gets, "asked over HTTP"


def test_a_job_on_a_running_resource_is_made_on_it(emulator: Emulator, provider: Any) -> None:
    make_resource(emulator, "team-pool")
    settle(emulator)
    job = {"jobSpec": job_spec("team-pool", 2), "region": REGION}
    made = provider.create(checked(provider, spec_props(job)))
    status, found = rest(emulator, "GET", str(made.outs["resourceName"]))
    assert status == 200, found
    assert found["jobSpec"]["persistentResourceId"] == "team-pool"
    assert found["state"] in ("JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING")


def test_a_job_that_does_not_fit_is_refused_offline_and_by_the_emulator(emulator: Emulator) -> None:
    declared = {"team-pool": {"resourcePools": [{"machineSpec": T4, "replicaCount": 2}]}}
    with pytest.raises(SpecError) as refused:
        judge(stack_config(emulator, "team-pool", replicas=3, declared=declared), ROOT)
    assert any(p.path == "gcp-training-jobs:jobs.on-pool.jobSpec.workerPoolSpecs[1]" and "does not fit persistent "
               "resource team-pool" in p.message for p in refused.value.problems), refused.value.problems
    make_resource(emulator, "team-pool", replicas=2)  # the same resource, made as gcloud makes it
    settle(emulator)
    status, answer = rest(emulator, "POST", f"{PARENT}/customJobs",
                          {"displayName": "on-pool", "jobSpec": job_spec("team-pool", 3)})
    assert status == 400, answer
    assert judge(stack_config(emulator, "team-pool", replicas=2, declared=declared), ROOT).resources["team-pool"]


STATUS_STACK = """\
config:
  gcp:project: my-proj
  gcp-training-jobs:backend: vertex
  gcp-training-jobs:region: us-central1
  gcp-training-jobs:apiEndpoint: {url}
  gcp-training-jobs:persistentResources:
    team-pool:
      resourcePools:
        - machineSpec: {{machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 2}}
          replicaCount: 2
  gcp-training-jobs:jobs:
    on-pool:
      jobSpec:
        persistentResourceId: team-pool
        scheduling: {{timeout: 3600s}}
        workerPoolSpecs:
          - machineSpec: {{machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 2}}
            replicaCount: 1
            containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}
"""


def test_status_shows_the_stacks_persistent_resources_and_the_jobs_on_them(
        tmp_path: Path, emulator: Emulator, provider: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from gcp_training_jobs.cli.main import parser
    from gcp_training_jobs.resources.job_model.inputs import wire_of
    from gcp_training_jobs.resources.settings import load_stack_file

    (tmp_path / "Pulumi.yaml").write_text("name: gcp-training-jobs\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    path = tmp_path / "stacks" / "Pulumi.team.yaml"
    path.write_text(STATUS_STACK.format(url=emulator.url))
    make_resource(emulator, "team-pool")  # what the stack's AiPersistentResource makes
    settle(emulator)
    settings = load_stack_file(path)
    made = provider.check({}, provider_props(wire_of(settings.jobs["on-pool"].job), name="on-pool", project=PROJECT,
                                             identity="organization/gcp-training-jobs/team/on-pool"))
    assert made.failures == []
    provider.create(made.inputs)
    monkeypatch.chdir(tmp_path)
    args = parser().parse_args(["status", "--stack", "team", "--json"])
    assert args.func(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["jobs"][0]["persistentResource"] == "team-pool"
    held = document["persistentResources"]
    assert [(r["id"], r["state"], r["declared"], r["jobs"]) for r in held] == [
        ("team-pool", "RUNNING", True, ["on-pool"])]
    assert held[0]["pools"][0]["machineType"] == "n1-standard-8"
    args = parser().parse_args(["status", "--stack", "team"])
    assert args.func(args) == 0
    assert "persistent resource team-pool: RUNNING (us-central1; declared); jobs on it: on-pool" in \
        capsys.readouterr().out


def test_the_providers_check_refuses_an_existing_resource_that_is_missing_or_not_running(
        emulator: Emulator, provider: Any) -> None:
    job = {"jobSpec": job_spec("team-pool", 1), "region": REGION}
    missing = provider.check({}, spec_props(job))
    assert [f.reason for f in missing.failures] == [
        f"TrainingJob l4, job: persistent resource {PARENT}/persistentResources/team-pool does not exist; "
        "allowed: the id of a RUNNING persistent resource in the job's project and region, or one the stack "
        "declares (gcp-training-jobs:persistentResources)"]
    declared = provider.check({}, spec_props(job, persistentResourceDeclared=True))  # the stack makes it first
    assert declared.failures == []
    make_resource(emulator, "team-pool")
    provisioning = provider.check({}, spec_props(job))
    assert [f.reason for f in provisioning.failures] == [
        f"TrainingJob l4, job: persistent resource {PARENT}/persistentResources/team-pool is PROVISIONING; "
        "allowed: a RUNNING one (Vertex AI refuses a job on a resource that is not RUNNING)"]
    settle(emulator)
    assert provider.check({}, spec_props(job)).failures == []


def test_an_existing_resource_a_job_does_not_fit_is_refused_by_plan_online_and_the_providers_check(
        emulator: Emulator, provider: Any) -> None:
    """The resource's pools as persistentResources.get answers them (2 machines of n1-standard-8 + 2 T4): a job
    asking 3 of them is refused before anything is sent, named at its pool; 2 fit."""
    make_resource(emulator, "team-pool", replicas=2)
    settle(emulator)
    too_many = online_review(judge(stack_config(emulator, "team-pool", replicas=3), ROOT))
    (problem,) = too_many.problems
    assert problem.startswith("job on-pool: gcp-training-jobs:jobs.on-pool.jobSpec.workerPoolSpecs[1]: "
                              "n1-standard-8 x3 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB does not fit persistent "
                              "resource team-pool (its replicaCount is more than the matching pool's): its pools are "
                              "resourcePools[0] n1-standard-8 x2 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB;"), problem
    assert online_review(judge(stack_config(emulator, "team-pool", replicas=2), ROOT)).problems == []
    refused = provider.check({}, spec_props({"jobSpec": job_spec("team-pool", 3), "region": REGION}))
    (failure,) = refused.failures
    assert failure.reason.startswith("TrainingJob l4, job: job.jobSpec.workerPoolSpecs[1]: n1-standard-8 x3 + 2 "
                                     "NVIDIA_TESLA_T4, disk pd-ssd 100 GB does not fit persistent resource "
                                     "team-pool"), failure.reason
    other_machine = job_spec("team-pool", 1)
    other_machine["workerPoolSpecs"][1]["machineSpec"] = {"machineType": "n1-standard-16"}
    (failure,) = provider.check({}, spec_props({"jobSpec": other_machine, "region": REGION})).failures
    assert "(its machineSpec and diskSpec match none of its pools)" in failure.reason, failure.reason
    assert provider.check({}, spec_props({"jobSpec": job_spec("team-pool", 2), "region": REGION})).failures == []
