"""A region per job and tuningJob, the provider against the emulator over real HTTP: a tuning job created as a
Vertex hyperparameterTuningJobs resource in its region, a jobSpec job in its region, and a job whose stack now names
the region it already runs in: the provider's diff sees no change."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.plan.command import plan_stack
from tests.helpers import checked, l4_spot, spec_props
from tests.job_regions_support import H100, ROOT, SWEEP, THREE, write


def tuning_props(region: str = "europe-west4") -> dict[str, Any]:
    config = copy.deepcopy(SWEEP["tuningJob"])
    config["trialJobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "gs://my-job-dir/jobs/sweep"}
    return spec_props({"tuningJob": config, "region": region}, name="sweep", identity="org/proj/dev/sweep")


def test_a_tuning_job_is_created_in_its_region(provider, emulator) -> None:
    inputs = checked(provider, tuning_props())
    outs = provider.create(inputs).outs
    assert outs["resourceName"].startswith("projects/my-proj/locations/europe-west4/hyperparameterTuningJobs/")
    (job,) = emulator.state.jobs()
    body = job["job"]
    assert body["maxTrialCount"] in (8, "8") and body["parallelTrialCount"] in (2, "2")
    assert body["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] == "NVIDIA_L4"
    assert body["displayName"] == outs["jobId"]
    assert {"pulumi-job", "pulumi-resource", "pulumi-spec", "pulumi-stack"} <= set(body["labels"])
    assert provider.read(outs["resourceName"], outs).outs["state"] == "QUEUED"
    moved = checked(provider, tuning_props("us-central1"))
    assert provider.diff(outs["resourceName"], {**inputs, **outs}, moved).replaces == ["job"]


def test_a_tuning_job_is_judged_in_its_region_by_the_check(provider) -> None:
    result = provider.check({}, tuning_props("us-east5"))  # no L4 in us-east5
    assert [f.reason.split(":")[0] for f in result.failures] == [
        "TrainingJob sweep, job.tuningJob.trialJobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"]
    assert "NVIDIA_L4 is not offered for training in us-east5" in result.failures[0].reason


def test_a_job_spec_job_is_created_in_its_region(provider, emulator) -> None:
    job = l4_spot()
    job["region"] = "europe-west2"
    outs = provider.create(checked(provider, spec_props(job))).outs
    assert outs["resourceName"].startswith("projects/my-proj/locations/europe-west2/customJobs/")
    assert outs["placement"]["region"] == "europe-west2"


def test_naming_the_region_a_job_runs_in_is_no_change_for_the_provider(provider, tmp_path: Path) -> None:
    """The stack before (the job in the stack's region) and after (its own `region`, the same): the provider's
    diff of the job input each plan registers says nothing changed."""
    def registered(jobs: dict[str, Any], side: str) -> dict[str, Any]:
        folder = tmp_path / side
        folder.mkdir()
        planned = plan_stack("s", write(folder, jobs, "s", region="us-east5"), ROOT)
        found = next(r for r in planned.recording.of_type("training:TrainingJob") if r.name == "h100")
        return dict(found.inputs)

    without = {k: v for k, v in H100.items() if k != "region"}
    olds = {**checked(provider, registered({"h100": without}, "before")), "state": "RUNNING"}
    news = checked(provider, registered({"h100": {**without, "region": "us-east5"}}, "after"))
    assert provider.diff("id", olds, news).changes is False


def test_the_quota_check_holds_each_job_against_its_own_regions_limits(provider, emulator, tmp_path: Path) -> None:
    """plan --online's review and the provider's check both count a tuning job's parallel trials in its region."""
    from gcp_training_jobs.cli.plan.quota import online_review
    from gcp_training_jobs.jobspec.core.names import NAMESPACE
    from gcp_training_jobs.resources.settings import load_stack_file
    from tests.helpers import control

    l4 = "custom_model_training_nvidia_l4_gpus"
    control(emulator, "quotas", {"metric": l4, "region": "us-central1", "limit": 1})  # not where any job runs
    path = write(tmp_path, THREE)
    path.write_text(path.read_text().replace("config:\n", f"config:\n  {NAMESPACE}:apiEndpoint: {emulator.url}\n"))
    settings = load_stack_file(path, root=ROOT)
    fits = online_review(settings)
    assert fits.problems == [], fits.problems
    assert "asia-southeast1, europe-west4, us-east5" in fits.lines[0] and fits.lines[0].endswith("all hold")
    control(emulator, "quotas", {"metric": l4, "region": "europe-west4", "limit": 1})  # the sweep runs 2 at once
    over = online_review(settings)
    assert len(over.problems) == 1 and "europe-west4" in over.problems[0] and l4 in over.problems[0]
    refused = provider.check({}, tuning_props())
    assert len(refused.failures) == 1 and "europe-west4" in refused.failures[0].reason
    assert l4 in refused.failures[0].reason
