"""A region per job and Vertex tuning configs in stacks (offline): `jobs.NAME.region` beside a jobSpec or a
tuningJob, a trainingInput's own region, each judged, priced and quota-counted in its own region; the refusals;
and a job whose `region` names the region it already runs in keeps its identity (its `job` input and `pulumi-spec`
label byte-identical)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.plan.command import plan_stack
from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.resources.job_model.identity import identity_labels
from gcp_training_jobs.resources.job_model.inputs import region_of
from gcp_training_jobs.resources.settings import load_stack_file
from tests.helpers import stack_file_problems as problems_of
from tests.job_regions_support import H100, JOBS, LEGACY, ROOT, SWEEP, THREE, write


def test_each_job_is_judged_in_its_own_region(tmp_path: Path) -> None:
    settings = load_stack_file(write(tmp_path, THREE), root=ROOT)
    assert {name: job.facts.region for name, job in settings.jobs.items()} == \
        {"h100": "us-east5", "sweep": "europe-west4", "legacy": "asia-southeast1"}
    sweep = settings.jobs["sweep"].facts
    assert (sweep.kind, sweep.trials, sweep.parallel_runs, sweep.accelerator_totals) == \
        ("tuning", 8, 2, {"NVIDIA_L4": 2})
    # the rules follow the region: us-east5 offers no L4, so the same sweep there is refused, at the job's key
    moved = {**THREE, "sweep": {**SWEEP, "region": "us-east5"}}
    found = problems_of(write(tmp_path, moved, "moved"))
    assert found and all("jobs.sweep" in line for line in found)
    assert any("NVIDIA_L4" in line and "us-east5" in line for line in found)


def test_the_plan_prices_and_counts_quota_per_region(tmp_path: Path) -> None:
    path = write(tmp_path, THREE)
    planned = plan_stack("three", path, ROOT)
    document = json.loads(json.dumps(planned.document, default=str))
    cost = document["cost"]["jobs"]
    assert {name: cost[name]["region"] for name in THREE} == \
        {"h100": "us-east5", "sweep": "europe-west4", "legacy": "asia-southeast1"}
    # trials in parallel, worst case over every trial
    assert "8 trials x" in cost["sweep"]["worstCase"]["text"]
    resources = {r["name"]: r for r in document["resources"]}
    assert resources["sweep"]["details"]["trials"] == "8, 2 at once"
    assert resources["h100"]["details"]["region"] == "us-east5"
    # a job's inputs hold its own facts: what the stack asks is judged from the stack's config by the provider
    assert all("stackQuota" not in resources[name]["inputs"] for name in THREE)
    # the tuning job travels as the job input's third form, in its region
    job = resources["sweep"]["inputs"]["job"]
    assert set(job) == {"tuningJob", "region"} and job["region"] == "europe-west4"
    assert job["tuningJob"]["trialJobSpec"]["baseOutputDirectory"]["outputUriPrefix"].endswith("/jobs/sweep")


def test_refusals_name_the_keys(tmp_path: Path) -> None:
    clash = {"legacy": {**LEGACY, "region": "us-west1"}}
    assert problems_of(write(tmp_path, clash, "clash")) == [
        f"{tmp_path}/Pulumi.clash.yaml: {JOBS}.legacy.region: 'us-west1' differs from {JOBS}.legacy.trainingInput."
        "region 'asia-southeast1'; allowed: one region, in either place (the same in both)"]
    load_stack_file(write(tmp_path, {"legacy": {**LEGACY, "region": "asia-southeast1"}}, "same"), root=ROOT)
    three = {"x": {**H100, "trainingInput": LEGACY["trainingInput"], "tuningJob": SWEEP["tuningJob"]}}
    assert problems_of(write(tmp_path, three, "forms")) == [
        f"{tmp_path}/Pulumi.forms.yaml: {JOBS}.x: has trainingInput, jobSpec and tuningJob; allowed: exactly one of "
        "trainingInput, jobSpec, tuningJob"]
    nowhere = problems_of(write(tmp_path, {"h100": {**H100, "region": "mars-1"}}, "nowhere"))
    assert len(nowhere) == 1
    assert f"{JOBS}.h100.region: 'mars-1' is not a Vertex AI training region; allowed:" in nowhere[0]
    bad = copy.deepcopy(SWEEP)
    bad["tuningJob"]["maxTrialCount"] = 0
    assert any(f"{JOBS}.sweep.tuningJob.maxTrialCount:" in line
               for line in problems_of(write(tmp_path, {"sweep": bad}, "bad")))


def test_ai_platform_refuses_a_tuning_job(tmp_path: Path) -> None:
    path = write(tmp_path, {"sweep": SWEEP}, "ai")
    text = path.read_text().replace("backend: vertex", "backend: ai-platform")
    path.write_text(text)
    found = problems_of(path)
    assert any(f"{JOBS}.sweep.tuningJob:" in line and "Vertex AI only" in line for line in found)


@pytest.mark.parametrize("name, job, region", [
    ("h100", {k: v for k, v in H100.items() if k != "region"}, "us-east5"),
    ("sweep", {k: v for k, v in SWEEP.items() if k != "region"}, "europe-west4"),
    ("legacy", LEGACY, "asia-southeast1"),
])
def test_naming_the_region_a_job_runs_in_changes_nothing(tmp_path: Path, name: str, job: dict[str, Any],
                                                         region: str) -> None:
    """The job input and the pulumi-spec label of a job that names its region are those of the job without it."""
    def job_input(jobs: dict[str, Any], stack: str) -> dict[str, Any]:
        folder = tmp_path / stack
        folder.mkdir()
        planned = plan_stack("s", write(folder, jobs, "s", region=region), ROOT)
        registered = next(r for r in planned.recording.of_type("training:TrainingJob") if r.name == name)
        return dict(registered.inputs["job"])

    before, after = job_input({name: job}, "before"), job_input({name: {**job, "region": region}}, "after")
    assert json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True)
    assert region_of(after) == region
    identity = f"/gcp-training-jobs/stack/{name}"
    assert identity_labels(identity, before, VERTEX) == identity_labels(identity, after, VERTEX)
    elsewhere = job_input({name: {**job, "region": "europe-west4" if region != "europe-west4" else "us-central1"}},
                          "moved") if name != "legacy" else None
    if elsewhere is not None:  # another region: another job (a replace)
        assert identity_labels(identity, elsewhere, VERTEX) != identity_labels(identity, before, VERTEX)


def test_the_diff_moves_a_job_and_its_quota_between_regions(tmp_path: Path) -> None:
    from gcp_training_jobs.cli.diff.command import compare_stack

    def planned(jobs: dict[str, Any], side: str) -> Any:
        folder = tmp_path / side
        folder.mkdir()
        return plan_stack("s", write(folder, jobs, "s"), ROOT)

    before = planned(THREE, "before")
    moved = compare_stack(before, planned({**THREE, "h100": {**H100, "region": "us-central1"}}, "moved"))
    assert (moved["jobs"]["h100"]["change"], moved["jobs"]["h100"]["fields"]) == ("replaced", ["region"])
    assert moved["jobs"]["sweep"]["change"] == moved["jobs"]["legacy"]["change"] == "unchanged"
    h100 = "custom_model_training_nvidia_h100_gpus"
    assert (moved["quota"]["us-east5"][h100], moved["quota"]["us-central1"][h100]) == \
        ({"before": 8, "after": 0}, {"before": 0, "after": 8})
    assert moved["quota"]["europe-west4"]["custom_model_training_nvidia_l4_gpus"] == {"before": 2, "after": 2}
    same = compare_stack(before, planned({**THREE, "legacy": {**LEGACY, "region": "asia-southeast1"}}, "same"))
    assert {name: job["change"] for name, job in same["jobs"].items()} == dict.fromkeys(THREE, "unchanged")


def test_a_fallback_of_a_tuning_job_moves_its_trials(tmp_path: Path) -> None:
    from gcp_training_jobs.resources.fallbacks import alternative_job

    data, problems = alternative_job({"tuningJob": SWEEP["tuningJob"], "region": "europe-west4"}, {
        "region": "us-central1", "machineSpec": {"machineType": "g2-standard-24", "acceleratorCount": 2},
        "scheduling": {"strategy": "SPOT"}})
    trial = data["tuningJob"]["trialJobSpec"]
    assert problems == [] and data["region"] == "us-central1" and trial["scheduling"]["strategy"] == "SPOT"
    assert trial["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "g2-standard-24", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 2}
    assert SWEEP["tuningJob"]["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] == 1
    jobs = {"sweep": {**SWEEP, "fallbacks": [{"region": "us-central1", "scheduling": {"strategy": "SPOT"}}]}}
    settings = load_stack_file(write(tmp_path, jobs, "fallback"), root=ROOT)
    (alternative,) = settings.jobs["sweep"].alternatives
    assert (alternative.facts.region, alternative.facts.strategy, alternative.facts.kind) == \
        ("us-central1", "SPOT", "tuning")


def test_a_trainer_goes_into_a_tuning_jobs_trial_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.jobspec.core.names import TODAY_ENV

    monkeypatch.setenv(TODAY_ENV, "2024-06-01")  # the prebuilt image below was available then
    pool = {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
            "replicaCount": 1, "pythonPackageSpec": {
                "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                "pythonModule": "trainer.task"}}
    sweep = copy.deepcopy(SWEEP)
    sweep["tuningJob"]["trialJobSpec"]["workerPoolSpecs"] = [pool]
    sweep["trainer"] = {"path": "trainers/example"}
    planned = plan_stack("three", write(tmp_path, {"sweep": sweep}), ROOT)
    (job,) = planned.recording.of_type("training:TrainingJob")
    (package,) = job.inputs["job"]["tuningJob"]["trialJobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"][
        "packageUris"]
    assert package.startswith("gs://three-packages/") and package.endswith(".tar.gz")
    sweep["tuningJob"]["trialJobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["pythonModule"] = "trainer.nope"
    assert problems_of(write(tmp_path, {"sweep": sweep}, "nope")) == [
        f"{tmp_path}/Pulumi.nope.yaml: {JOBS}.sweep.tuningJob.trialJobSpec.workerPoolSpecs[0].pythonPackageSpec."
        "pythonModule: 'trainer.nope' is not a module of trainer trainers/example (no trainer/nope.py in it); "
        "allowed: a module of the trainer package, e.g. trainer.task"]


def test_validate_and_plan_json_on_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "components", *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=False)

    good = write(tmp_path, THREE)
    ok = run("validate", str(good))
    assert (ok.returncode, ok.stdout) == (0, f"{good}: ok (stack)\n")
    clash = write(tmp_path, {"legacy": {**LEGACY, "region": "us-west1"}}, "clash")
    refused = run("validate", str(clash))
    assert refused.returncode == 1 and f"{JOBS}.legacy.region: 'us-west1' differs from {JOBS}.legacy." \
        "trainingInput.region 'asia-southeast1'" in refused.stdout + refused.stderr
    planned = run("plan", "--stack", "three", "--stacks-dir", str(tmp_path), "--json")
    assert planned.returncode == 0, planned.stderr
    cost = json.loads(planned.stdout)["cost"]["jobs"]
    assert {name: cost[name]["region"] for name in THREE} == \
        {"h100": "us-east5", "sweep": "europe-west4", "legacy": "asia-southeast1"}


def test_a_tuning_job_the_program_makes_itself_is_described_from_its_input() -> None:
    from gcp_training_jobs.cli.plan.describe import _describe_job

    lines = dict(_describe_job({"job": {**SWEEP}, "backend": VERTEX, "project": "p"}, None))
    assert (lines["region"], lines["trials"], lines["accelerators"]) == ("europe-west4", "8, 2 at once", "2 NVIDIA_L4")
