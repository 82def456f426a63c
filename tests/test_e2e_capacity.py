"""The real engine when Google has no capacity (README, "When Google has no capacity"), against the emulator as a
separate process: a stack over quota fails `pulumi preview` naming the metric and `up` makes no job past the limit;
a stocked-out job with a fallback region ends SUCCEEDED there with one job for the resource; a user-code failure is
not made again while an infrastructure failure is, up to `retries`; changing `rerun` replaces the job.

Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import Emulator, Project, offline_config, process_emulator, require_pulumi  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
L4 = "custom_model_training_nvidia_l4_gpus"
SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"


def l4_spec() -> dict[str, Any]:
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/cap-project/trainers/t:1"}}],
        "scheduling": {"timeout": "7200s"}}


def stack_config(jobs: dict[str, Any]) -> dict[str, Any]:
    """Vertex AI jobs and no `gcp:` resources (buckets named, no APIs enabled)."""
    return offline_config("cap", jobs)


@pytest.fixture
def fresh(emulator: Emulator) -> Emulator:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": 1000000})
    return emulator


def job_of(project: Project, name: str) -> dict[str, Any]:
    (resource,) = [r for r in project.resources() if r["urn"].endswith(f"::{name}")]
    outputs: dict[str, Any] = resource["outputs"]
    return outputs


def jobs_of(emulator: Emulator, stem: str) -> list[dict[str, Any]]:
    return [entry for entry in emulator.control("jobs")
            if entry["job"]["labels"]["pulumi-job"].startswith(f"{stem}_")]


def test_a_stack_over_quota_fails_preview_naming_the_metric_and_up_makes_no_job_past_the_limit(
        tmp_path: Path, fresh: Emulator) -> None:
    fresh.control("quotas", {"metric": L4, "region": "us-central1", "limit": 1})
    project = Project.copy(tmp_path, PULUMI, fresh, config=stack_config(
        {"a": {"jobSpec": l4_spec()}, "b": {"jobSpec": l4_spec()}}))  # 1 L4 each: fits alone, not together
    preview = project.pulumi("preview", ok=False)
    text = preview.stdout + preview.stderr
    assert preview.returncode != 0, text
    assert f"aiplatform.googleapis.com/{L4} in us-central1" in text and "the limit is 1" in text, text
    assert "b needs 1, the stack's earlier new jobs there take 1" in text, text  # a fits; b is named alone
    assert "iam-admin/quotas?project=cap-project" in text, text
    up = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    assert up.returncode != 0
    # `a` fits and may be made before `b`'s refusal stops the update (the engine checks and creates concurrently);
    # `b`, past the limit, is never made
    assert jobs_of(fresh, "b") == [] and len(jobs_of(fresh, "a")) <= 1
    fresh.control("quotas", {"metric": L4, "region": "us-central1", "limit": 2})
    project.up()
    assert len(jobs_of(fresh, "a")) == 1 and len(jobs_of(fresh, "b")) == 1  # nothing made twice
    assert len(fresh.calls("customJobs.create")) == 2


def test_a_stocked_out_job_with_a_fallback_region_ends_succeeded_there(tmp_path: Path, fresh: Emulator) -> None:
    fresh.control("stockouts", {"region": "us-central1", "machineType": "g2-standard-8"})
    fresh.control("phase", {"seconds": 0})
    project = Project.copy(tmp_path, PULUMI, fresh, config=stack_config({"trial": {
        "jobSpec": l4_spec(), "waitForCompletion": True, "waitTimeoutSeconds": 600,
        "fallbacks": [{"region": "us-east1"}]}}))
    project.up()
    outputs = job_of(project, "trial")
    assert outputs["state"] == "SUCCEEDED" and outputs["retryCount"] == 1
    assert outputs["placement"] == {"index": 1, "region": "us-east1", "strategy": "STANDARD", "reservation": None,
                                    "machine": "g2-standard-8 + 1 NVIDIA_L4"}
    assert outputs["resourceName"].startswith("projects/cap-project/locations/us-east1/customJobs/")
    assert len(project.resources()) == 1  # one job for the resource
    made = sorted((e["name"].split("/")[3], e["job"]["state"]) for e in jobs_of(fresh, "trial"))
    assert made == [("us-central1", "JOB_STATE_FAILED"), ("us-east1", "JOB_STATE_SUCCEEDED")]
    assert fresh.live() == {}
    project.pulumi("preview", "--expect-no-changes")  # SUCCEEDED: kept, no change


def test_a_user_code_failure_is_not_made_again_and_an_infrastructure_failure_is_up_to_retries(
        tmp_path: Path, fresh: Emulator) -> None:
    project = Project.copy(tmp_path, PULUMI, fresh, config=stack_config({
        "mine": {"jobSpec": l4_spec()}, "theirs": {"jobSpec": l4_spec(), "retries": 1}}))
    project.up()
    fresh.control("fail", {"job": job_of(project, "mine")["resourceName"], "exitStatus": 1})
    fresh.control("fail", {"job": job_of(project, "theirs")["resourceName"], "message": "Internal error encountered."})
    preview = project.pulumi("preview", "--diff")
    assert "the user's code failed, replica workerpool0-0" in preview.stdout + preview.stderr
    project.up()
    assert len(jobs_of(fresh, "mine")) == 1  # kept: never made again on its own
    theirs = job_of(project, "theirs")  # made again: the replaced FAILED job's record stays, its history
    assert theirs["retryCount"] == 1 and theirs["state"] == "QUEUED" and len(fresh.calls("customJobs.create")) == 3
    assert [e["job"]["labels"].get("pulumi-retry") for e in jobs_of(fresh, "theirs")] == [None, "1"]
    fresh.control("fail", {"job": theirs["resourceName"], "message": "Internal error encountered."})
    last = project.pulumi("preview", "--expect-no-changes")  # retries (1) used up: kept and reported
    assert "retries (1) allows" in last.stdout + last.stderr
    project.up()
    assert len(fresh.calls("customJobs.create")) == 3
    assert [e["job"]["state"] for e in jobs_of(fresh, "theirs")] == ["JOB_STATE_FAILED", "JOB_STATE_FAILED"]


def test_changing_rerun_replaces_the_job(tmp_path: Path, fresh: Emulator) -> None:
    project = Project.copy(tmp_path, PULUMI, fresh, config=stack_config({"trial": {"jobSpec": l4_spec()}}))
    project.up()
    first = job_of(project, "trial")["jobId"]
    project.edit_job("trial", lambda job: job.update(fallbacks=[{"region": "us-east1"}], retries=3))
    project.pulumi("preview", "--diff")  # fallbacks and retries: recorded in place, the running job stays
    project.up()
    assert job_of(project, "trial")["jobId"] == first and len(fresh.calls("customJobs.create")) == 1
    project.edit_job("trial", lambda job: job.update(rerun="second run"))
    preview = project.pulumi("preview", "--diff")
    assert "replace" in preview.stdout.split("Resources:")[-1], preview.stdout
    project.up()
    second = job_of(project, "trial")["jobId"]
    assert second != first and len(fresh.calls("customJobs.create")) == 2
    states = {e["job"]["labels"]["pulumi-job"]: e["job"]["state"] for e in jobs_of(fresh, "trial")}
    assert states == {first.lower(): "JOB_STATE_CANCELLED", second.lower(): "JOB_STATE_QUEUED"}


def sweep_config(parallel: int) -> dict[str, Any]:
    """A tuning job of L4 trials on demand, `parallel` at once."""
    return {"studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                          "parameters": [{"parameterId": "lr",
                                          "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]},
            "trialJobSpec": l4_spec(), "maxTrialCount": parallel * 2, "parallelTrialCount": parallel}


def test_a_fleet_is_placed_job_by_job_and_the_review_and_the_deploy_agree(tmp_path: Path, fresh: Emulator) -> None:
    """No Spot L4 in us-central1: `spot` goes to its fallback, `steady` and `sweep` stay, none is held against a
    metric it does not ask; `plan --online` says so before `up` does it. A fourth job over the on-demand limit is
    refused alone, for the metric it asks, by `plan --online` and `pulumi preview` alike."""
    fresh.control("quotas", {"metric": SPOT_L4, "region": "us-central1", "limit": 0})
    fresh.control("quotas", {"metric": L4, "region": "us-central1", "limit": 3})
    spot = {**l4_spec(), "scheduling": {"timeout": "7200s", "strategy": "SPOT"}}
    fleet = {"spot": {"jobSpec": spot, "fallbacks": [{"region": "us-east4"}]},
             "steady": {"jobSpec": l4_spec()},
             "sweep": {"tuningJob": sweep_config(2)}}
    project = Project.copy(tmp_path, PULUMI, fresh, config=stack_config(fleet))
    review = project.components("plan", "--stack", "local", "--online")
    said = review.stdout + review.stderr
    assert review.returncode == 0, said
    assert "job spot: over quota as written" in said and "will create it at fallbacks[0] (us-east4)" in said, said
    assert "job steady" not in said.split("Quotas (")[1] and "job sweep" not in said.split("Quotas (")[1], said
    project.up()
    regions = {entry["job"]["labels"]["pulumi-job"].split("_")[0]: entry["job"]["name"].split("/")[3]
               for entry in fresh.control("jobs")}
    assert regions == {"spot": "us-east4", "steady": "us-central1", "sweep": "us-central1"}, regions

    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].update({"big": {"jobSpec": l4_spec()}}))
    review = project.components("plan", "--stack", "local", "--online")
    said = review.stdout + review.stderr
    assert review.returncode == 1, said
    refused = [line for line in said.splitlines() if "quota aiplatform.googleapis.com" in line]
    assert len(refused) == 1 and "job big: quota aiplatform.googleapis.com/" + L4 in refused[0], said
    # steady and sweep are live: counted as what they hold, big is the one new job
    assert "big needs 1, the stack's earlier new jobs there take 0, live jobs hold 3, the limit is 3" in refused[0], \
        said
    preview = project.pulumi("preview", ok=False)
    text = preview.stdout + preview.stderr
    assert preview.returncode != 0, text
    assert "big needs 1, the stack's earlier new jobs there take 0, live jobs hold 3, the limit is 3" in text, text
    assert SPOT_L4 not in text.split("big needs")[0].rsplit("\n", 1)[-1], text
    for name in ("steady", "sweep", "spot"):
        assert f"{name} needs" not in text, text
