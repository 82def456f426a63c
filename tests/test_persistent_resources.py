"""Persistent resources in a stack (`gcp-training-jobs:persistentResources`): judged by the pool rules, a job on a
declared one held to Vertex's fit rule offline, priced, counted against quotas and guardrails as its machines."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.emulator import vertex_limits
from gcp_training_jobs.jobspec.catalog import vertex_jobspec
from tests.helpers import commit_all, offline_review, scratch_project

ROOT = Path(__file__).resolve().parents[1]
T4 = "{machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 2}"


def stack(resources: str, jobs: str, extra: str = "") -> str:
    return textwrap.dedent("""\
        config:
          gcp:project: my-project-123
          gcp-training-jobs:backend: vertex
          gcp-training-jobs:region: us-central1
        """) + textwrap.indent(extra + "gcp-training-jobs:persistentResources:\n" + textwrap.indent(
        resources, "  ") + "gcp-training-jobs:jobs:\n" + textwrap.indent(jobs, "  "), "  ")


TEAM_POOL = f"""\
team-pool:
  labels: {{team: ml}}
  resourcePools:
    - machineSpec: {T4}
      autoscalingSpec: {{minReplicaCount: 1, maxReplicaCount: 4}}
"""


def job_on(resource: str, replicas: int, machine: str = T4, disk: str = "") -> str:
    return f"""\
on-pool:
  jobSpec:
    persistentResourceId: {resource}
    scheduling: {{timeout: 7200s}}
    workerPoolSpecs:
      - machineSpec: {T4}
        replicaCount: 1
        containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}
      - machineSpec: {machine}
        replicaCount: {replicas}
        containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}{disk}
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "Pulumi.pr.yaml"
    path.write_text(text)
    return run("validate", str(path))


def test_a_job_that_fits_a_declared_resource_passes(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3)))
    assert done.returncode == 0, done.stderr
    assert "ok (stack)" in done.stdout


def test_more_replicas_than_the_resource_pool_holds_is_refused_naming_both_pools(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 5)))
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() + done.stderr.splitlines() if "does not fit" in x)
    assert "gcp-training-jobs:jobs.on-pool.jobSpec.workerPoolSpecs[1]: n1-standard-8 x5 + 2 NVIDIA_TESLA_T4" in line
    assert "its replicaCount is more than the matching pool's" in line
    assert "resourcePools[0] n1-standard-8 x1..4 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB" in line
    assert "persistent-resource-train" in line
    assert "Traceback" not in done.stderr


def test_a_different_disk_does_not_fit_while_the_default_disk_written_out_does(tmp_path: Path) -> None:
    other = "\n        diskSpec: {bootDiskType: pd-standard}"
    same = "\n        diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 100}"
    refused = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 2, disk=other)))
    assert refused.returncode == 1
    assert "disk pd-standard 100 GB does not fit persistent resource team-pool (its machineSpec and diskSpec " \
           "match none of its pools)" in refused.stdout + refused.stderr
    assert validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 2, disk=same))).returncode == 0


def test_a_tuning_jobs_trials_on_a_declared_resource_are_held_to_the_fit_rule_under_its_key(tmp_path: Path) -> None:
    """A tuning job runs its trials on the resource its trialJobSpec names: the same rule, its pool named under
    `tuningJob`, where the stack file holds it."""
    trial = textwrap.indent(job_on("team-pool", 5).split("jobSpec:\n", 1)[1], "  ")
    sweep = ("sweep:\n  tuningJob:\n    maxTrialCount: 4\n    parallelTrialCount: 2\n    studySpec:\n"
             "      metrics: [{metricId: accuracy, goal: MAXIMIZE}]\n"
             "      parameters: [{parameterId: lr, doubleValueSpec: {minValue: 0.0001, maxValue: 0.1}}]\n"
             "    trialJobSpec:\n" + trial)
    done = validate(tmp_path, stack(TEAM_POOL, sweep))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gcp-training-jobs:jobs.sweep.tuningJob.trialJobSpec.workerPoolSpecs[1]: n1-standard-8 x5 + 2 " \
           "NVIDIA_TESLA_T4, disk pd-ssd 100 GB does not fit persistent resource team-pool" in done.stdout
    assert validate(tmp_path, stack(TEAM_POOL, sweep.replace("replicaCount: 5", "replicaCount: 4"))).returncode == 0


def test_another_machine_does_not_fit(tmp_path: Path) -> None:
    l4 = "{machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}"
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 1, machine=l4)))
    assert done.returncode == 1
    assert "workerPoolSpecs[1]: g2-standard-8 x1 + 1 NVIDIA_L4, disk pd-ssd 100 GB does not fit" in done.stdout


def test_an_id_the_stack_does_not_declare_is_an_existing_resource_not_checked_offline(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("made-elsewhere", 50)))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_resource_is_judged_by_the_pool_rules_and_its_keys_named(tmp_path: Path) -> None:
    bad = """\
team-pool:
  zone: us-central1-a
  resourcePools:
    - machineSpec: {machineType: n1-standard-8}
other:
  region: europe-west4
  resourcePools:
    - machineSpec: {machineType: n1-standard-8, acceleratorType: NVIDIA_H100_80GB, acceleratorCount: 2}
      replicaCount: 2
Bad_Name:
  resourcePools: []
"""
    done = validate(tmp_path, stack(bad, ""))
    out = done.stdout
    assert done.returncode == 1
    assert "gcp-training-jobs:persistentResources.team-pool.zone: unknown field 'zone'" in out
    assert ("gcp-training-jobs:persistentResources.other.resourcePools[0].machineSpec.acceleratorType: "
            "NVIDIA_H100_80GB on n1-standard-8 is not offered") in out
    assert "'Bad_Name' is not a persistent resource id" in out


def test_a_resources_labels_and_replicas_are_held_to_what_vertex_takes(tmp_path: Path) -> None:
    """Its labels by the rule a job's and the stack's are judged by; a replicaCount beside an autoscalingSpec within
    its bounds; a pool with neither is refused (its machine count is nowhere)."""
    bad = """\
team-pool:
  labels: {Team: ml}
  resourcePools:
    - machineSpec: {machineType: n1-standard-8}
      replicaCount: 5
      autoscalingSpec: {minReplicaCount: 1, maxReplicaCount: 2}
    - machineSpec: {machineType: n1-standard-4}
"""
    done = validate(tmp_path, stack(bad, job_on("made-elsewhere", 1)))
    assert done.returncode == 1
    at = f"{tmp_path / 'Pulumi.pr.yaml'}: gcp-training-jobs:persistentResources.team-pool"
    lines = [line for line in done.stdout.splitlines() if line.startswith(at)]
    assert lines == [
        f"{at}.labels.Team: 'Team' is not a valid label key; allowed: lowercase letters, digits, _ and -, starting "
        "with a letter, at most 63 characters",
        f"{at}.resourcePools[0].replicaCount: 5 is outside its autoscalingSpec 1..2; allowed: from minReplicaCount "
        "to maxReplicaCount, or unset (it starts at minReplicaCount)",
        f"{at}.resourcePools[1]: no replicaCount; allowed: a replicaCount (its machines), or an autoscalingSpec "
        "(minReplicaCount, maxReplicaCount)"], done.stdout
    equal = bad.replace("      replicaCount: 5\n", "").replace("maxReplicaCount: 2", "maxReplicaCount: 1")
    assert f"{at}.resourcePools[0].autoscalingSpec.maxReplicaCount: 1 equals minReplicaCount; allowed: more than " \
           "minReplicaCount (Vertex refuses an equal pair), or a replicaCount without autoscalingSpec" in \
           validate(tmp_path, stack(equal, job_on("made-elsewhere", 1))).stdout
    fixed = bad.replace("Team: ml", "team: ml").replace("replicaCount: 5", "replicaCount: 2").replace(
        "n1-standard-4}\n", "n1-standard-4}\n      replicaCount: 1\n")
    assert validate(tmp_path, stack(fixed, job_on("made-elsewhere", 1))).returncode == 0


def test_a_tpu_machine_in_a_resource_is_refused_naming_the_overview(tmp_path: Path) -> None:
    """A persistent resource holds the VMs and GPUs custom training takes: a TPU VM pool is refused at its machine
    type, once (not with a job's TPU rules: a resource may hold several pools)."""
    tpu = """\
team-pool:
  resourcePools:
    - machineSpec: {machineType: ct5lp-hightpu-4t}
      replicaCount: 1
    - machineSpec: {machineType: n1-standard-8}
      replicaCount: 1
"""
    done = validate(tmp_path, stack(tpu, job_on("made-elsewhere", 1)))
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if "persistentResources.team-pool" in line]
    assert lines == [f"{tmp_path / 'Pulumi.pr.yaml'}: gcp-training-jobs:persistentResources.team-pool.resourcePools[0]."
                     "machineSpec.machineType: ct5lp-hightpu-4t is a TPU machine; allowed: the VMs and GPUs custom "
                     "training jobs take (a persistent resource holds no TPU: https://cloud.google.com/vertex-ai/docs/"
                     "training/persistent-resource-overview); run a TPU job on its own machines"], done.stdout


def test_a_job_in_another_region_than_its_declared_resource_is_refused(tmp_path: Path) -> None:
    elsewhere = TEAM_POOL.replace("  labels: {team: ml}\n", "  region: europe-west4\n")
    done = validate(tmp_path, stack(elsewhere, job_on("team-pool", 1)))
    assert done.returncode == 1
    assert ("gcp-training-jobs:jobs.on-pool.jobSpec.persistentResourceId: 'team-pool' is in europe-west4, and the "
            "job runs in us-central1; allowed: a job in the resource's region") in done.stdout


def test_persistent_resources_are_vertex_only(tmp_path: Path) -> None:
    text = stack(TEAM_POOL, "").replace("backend: vertex", "backend: ai-platform")
    done = validate(tmp_path, text)
    assert done.returncode == 1
    assert ("gcp-training-jobs:persistentResources: is set on backend ai-platform; persistent resources are Vertex "
            "AI's; allowed: gcp-training-jobs:backend vertex") in done.stdout


def test_the_client_and_the_emulator_hold_vertex_disk_defaults_alike() -> None:
    assert vertex_jobspec.BOOT_DISK_DEFAULT_TYPE == vertex_limits.BOOT_DISK_TYPE
    assert vertex_jobspec.BOOT_DISK_DEFAULT_HYPERDISK == vertex_limits.BOOT_DISK_TYPE_HYPERDISK
    assert vertex_jobspec.BOOT_DISK_DEFAULT_HYPERDISK_MACHINES == vertex_limits.BOOT_DISK_HYPERDISK_MACHINES
    assert vertex_jobspec.BOOT_DISK_DEFAULT_GB == vertex_limits.BOOT_DISK_SIZE_GB
    for machine in ("n1-standard-8", "a3-ultragpu-8g", "a4-highgpu-8g", "a2-highgpu-1g"):
        assert vertex_jobspec.boot_disk_of(machine, None, None) == vertex_limits.boot_disk(machine, None)


# --- plan --json: cost, guardrails, quotas ---------------------------------------------------------------


def plan_document(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    (tmp_path / "Pulumi.pr.yaml").write_text(text)
    done = run("plan", "--stack", "pr", "--stacks-dir", str(tmp_path), "--json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_plan_prices_the_resource_at_the_least_and_the_most_and_the_job_on_it_at_nothing(tmp_path: Path) -> None:
    code, document = plan_document(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3)))
    assert code == 0
    cost = document["cost"]
    held = cost["persistentResources"]["team-pool"]
    per_machine = {p["what"]: p["onDemandUsdPerHour"] for p in held["parts"]}
    one = per_machine["n1-standard-8"] + 2 * per_machine["NVIDIA_TESLA_T4"]  # one replica, from the price table
    assert held["atLeast"]["knownUsdPerHour"] == pytest.approx(one, rel=1e-6)
    assert held["atMost"]["knownUsdPerHour"] == pytest.approx(4 * one, rel=1e-6)
    assert {p["what"]: p["units"] for p in held["parts"]} == {"n1-standard-8": 4, "NVIDIA_TESLA_T4": 8}
    assert held["bases"] and held["region"] == "us-central1"
    job = cost["jobs"]["on-pool"]
    assert job["persistentResource"] == "team-pool"
    assert job["onDemand"]["knownUsdPerHour"] == 0 and job["parts"] == []
    assert "runs on persistent resource team-pool: $0.00/h" in job["text"]
    assert cost["stack"]["onDemand"]["knownUsdPerHour"] == pytest.approx(4 * one, rel=1e-6)
    # the registered resource: pulumi-gcp's AiPersistentResource with the stack's labels, the job after it
    made = {r["type"]: r for r in document["resources"]}["gcp:vertex/aiPersistentResource:AiPersistentResource"]
    assert made["name"] == "team-pool" and made["dependsOn"] == ["apis"]
    assert made["inputs"]["labels"] == {"managed-by": "pulumi", "stack": "pr", "team": "ml"}
    assert made["inputs"]["location"] == "us-central1"
    assert made["inputs"]["resourcePools"][0]["autoscalingSpec"] == {"maxReplicaCount": "4", "minReplicaCount": "1"}
    job_made = {r["name"]: r for r in document["resources"]}["on-pool"]
    assert "team-pool" in job_made["dependsOn"]


def test_guardrails_count_the_resource_not_the_jobs_on_it(tmp_path: Path) -> None:
    # the job alone holds 8 T4s; the resource holds at most 8: a cap of 8 holds (the job is not counted twice)
    rails = "gcp-training-jobs:guardrails: {maxAcceleratorsPerStack: 8, maxHourlyUsd: 100}\n"
    code, document = plan_document(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3), rails))
    assert code == 0, document["guardrails"]
    rails = "gcp-training-jobs:guardrails: {maxAcceleratorsPerStack: 7, maxHourlyUsd: 2, allowedAccelerators: " \
            "[NVIDIA_L4]}\n"
    code, document = plan_document(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3), rails))
    problems = document["guardrails"]["problems"]
    assert code == 1
    assert any("maxAcceleratorsPerStack: the stack's jobs and persistent resources hold 8 accelerators at once "
               "(persistent resource team-pool 8)" in p for p in problems), problems
    assert any("maxHourlyUsd" in p and "over the cap" in p for p in problems), problems
    assert any("allowedAccelerators: persistent resource team-pool uses NVIDIA_TESLA_T4 (gcp-training-jobs:"
               "persistentResources.team-pool.resourcePools[0]); allowed: NVIDIA_L4" in p for p in problems), problems
    assert not any("job on-pool" in p for p in problems), problems


def test_plan_shows_the_quotas_the_stack_asks_by_region_the_resource_counting_for_the_job_on_it(
        tmp_path: Path) -> None:
    """plan --json's `quota` (offline): the resource's 4 machines of n1-standard-8 + 2 T4 at the most in its region,
    the job on it nothing, a job of its own in another region its own machines; the text says the same per line."""
    own = f"""\
own:
  region: us-east1
  jobSpec:
    scheduling: {{timeout: 7200s}}
    workerPoolSpecs:
      - machineSpec: {T4}
        replicaCount: 1
        containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}
"""
    code, document = plan_document(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3) + own))
    assert code == 0, document
    quota = document["quota"]
    assert quota["us-central1"]["custom_model_training_nvidia_t4_gpus"] == {
        "units": 8, "by": {"persistent resource team-pool": 8}}
    assert quota["us-central1"]["custom_model_training_cpus"] == {"units": 32,
                                                                  "by": {"persistent resource team-pool": 32}}
    assert quota["us-east1"]["custom_model_training_nvidia_t4_gpus"] == {"units": 2, "by": {"own": 2}}
    text = run("plan", "--stack", "pr", "--stacks-dir", str(tmp_path)).stdout
    assert "    us-central1: custom_model_training_nvidia_t4_gpus 8 (persistent resource team-pool 8)" in text
    assert "    us-east1: custom_model_training_nvidia_t4_gpus 2 (own 2)" in text


def test_quotas_count_the_resource_in_its_region_and_nothing_for_the_job_on_it() -> None:
    from gcp_training_jobs.resources.settings.judge import judge
    from gcp_training_jobs.resources.settings.quota import askers

    config = {"gcp:project": "my-project-123", "gcp-training-jobs:backend": "vertex",
              "gcp-training-jobs:persistentResources": {"team-pool": {"region": "europe-west4", "resourcePools": [
                  {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                                   "acceleratorCount": 2}, "autoscalingSpec": {"minReplicaCount": 1,
                                                                               "maxReplicaCount": 4}}]}}}
    settings = judge(config, ROOT)
    found = {a.name: (a.written.region, dict(a.written.needs.units)) for a in askers(settings)}
    assert found["persistent resource team-pool"][0] == "europe-west4"
    assert found["persistent resource team-pool"][1]["custom_model_training_nvidia_t4_gpus"] == 8
    assert found["persistent resource team-pool"][1]["custom_model_training_cpus"] == 32


# --- diff ---------------------------------------------------------------------------------------------------


def test_diff_shows_a_resource_resized_added_and_removed_with_its_cost(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.cli.diff.command import diff
    from gcp_training_jobs.cli.diff.text import render_text

    repo = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    fixed = TEAM_POOL.replace("autoscalingSpec: {minReplicaCount: 1, maxReplicaCount: 4}", "replicaCount: 4")
    old_pool = fixed.replace("replicaCount: 4", "replicaCount: 2")  # a replicaCount is resized in place
    gone = "old-pool:\n  resourcePools:\n    - machineSpec: {machineType: n1-standard-4}\n      replicaCount: 1\n"
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(old_pool + gone, job_on("team-pool", 2)))
    base = commit_all(repo, "base")
    added = "eval-pool:\n  resourcePools:\n    - machineSpec: {machineType: n1-standard-4}\n      replicaCount: 2\n"
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(fixed + added, job_on("team-pool", 2)))
    monkeypatch.chdir(repo)
    document = diff(base, None, ["pr"])
    assert isinstance(document, dict), document
    held = document["stacks"]["pr"]["persistentResources"]
    assert {name: item["change"] for name, item in held.items()} == {
        "team-pool": "resized", "eval-pool": "added", "old-pool": "removed"}
    team = held["team-pool"]
    assert team["after"]["usdPerHour"] == pytest.approx(2 * team["before"]["usdPerHour"], rel=1e-6)
    assert team["after"]["usdPerHourAtLeast"] == pytest.approx(team["after"]["usdPerHour"], rel=1e-6)  # no scaling
    assert team["deltaUsdPerHour"] == pytest.approx(team["after"]["usdPerHour"] - team["before"]["usdPerHour"],
                                                    abs=1e-6)
    assert held["old-pool"]["after"] is None and held["eval-pool"]["before"] is None
    pr = document["stacks"]["pr"]
    assert pr["change"] == "changed" and pr["jobs"]["on-pool"]["change"] == "unchanged"
    assert pr["after"]["usdPerHour"] == pytest.approx(
        team["after"]["usdPerHour"] + held["eval-pool"]["after"]["usdPerHour"], rel=1e-6)
    assert pr["resources"] == {"added": [], "removed": [], "changed": [], "replaced": []}  # persistent: listed apart
    quota = pr["quota"]["us-central1"]["custom_model_training_nvidia_t4_gpus"]
    assert quota == {"before": 4, "after": 8}  # the resource's GPUs at the most; the job on it counts none
    text = render_text(document)
    least = [f"${team[side]['usdPerHourAtLeast']:,.2f}/h" for side in ("before", "after")]
    assert (f"persistent resource team-pool: resized: its replicas change; $/h at the least {least[0]} -> {least[1]} "
            "(+") in text
    assert team["changes"] == ["pool 0 replicas 2 -> 4"]
    assert "persistent resource eval-pool: added" in text and "persistent resource old-pool: removed" in text


def test_diff_says_what_changed_in_a_resource_and_that_a_new_region_replaces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.cli.diff.command import diff
    from gcp_training_jobs.cli.diff.text import render_markdown, render_text

    repo = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    small = "n1-standard-4"
    disk_pool = "disk-pool:\n  resourcePools:\n    - machineSpec: {machineType: %s}\n      replicaCount: 1\n%s"
    label_pool = "label-pool:\n  labels: {owner: %s}\n  resourcePools:\n" \
        "    - machineSpec: {machineType: n1-standard-4}\n      replicaCount: 1\n"
    scale_pool = "scale-pool:\n  resourcePools:\n    - machineSpec: {machineType: n1-standard-4}\n" \
        "      autoscalingSpec: {minReplicaCount: 1, maxReplicaCount: %d}\n"
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(
        TEAM_POOL + disk_pool % (small, "") + label_pool % "a" + scale_pool % 2, job_on("team-pool", 2)))
    base = commit_all(repo, "base")
    moved = TEAM_POOL.replace("labels:", "region: us-east4\n  labels:")
    disk = "      diskSpec: {bootDiskType: pd-standard, bootDiskSizeGb: 200}\n"
    plain = "plain:\n  jobSpec:\n    workerPoolSpecs:\n      - machineSpec: {machineType: n1-standard-4}\n" \
        "        replicaCount: 1\n        containerSpec: {imageUri: us-docker.pkg.dev/p/r/t:1}\n"
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(
        moved + disk_pool % ("n1-standard-8", disk) + label_pool % "b" + scale_pool % 3, plain))
    monkeypatch.chdir(repo)
    document = diff(base, None, ["pr"])
    assert isinstance(document, dict), document
    held = document["stacks"]["pr"]["persistentResources"]
    team, pools, labels = held["team-pool"], held["disk-pool"], held["label-pool"]
    assert team["change"] == "replaced" and team["changes"] == ["region us-central1 -> us-east4"]
    assert team["note"] == ("its region changes, which it cannot change in place: the next `up` deletes it and makes "
                            "it again in us-east4; the jobs on it fail")
    # a pool's machineSpec and diskSpec, and the labels, are immutable in Google's definition of the resource
    assert pools["change"] == "replaced" and pools["note"] == (
        "its machines, disks change, which it cannot change in place: the next `up` deletes it and makes it again; "
        "the jobs on it fail")
    assert pools["changes"] == ["pool 0 machine n1-standard-4 -> n1-standard-8",
                                "pool 0 disk the default -> pd-standard 200 GB"]
    assert labels["change"] == "replaced" and labels["changes"] == ["labels owner=a -> owner=b"]
    scaled = held["scale-pool"]  # an autoscaling pool's bounds are its immutable autoscalingSpec
    assert (scaled["change"], scaled["changes"]) == ("replaced", ["pool 0 replicas 1 to 2 -> 1 to 3"])
    assert scaled["note"].startswith("its autoscaling changes, which it cannot change in place")
    text, markdown = render_text(document), render_markdown(document)
    least = [f"${team[side]['usdPerHourAtLeast']:,.2f}/h" for side in ("before", "after")]
    most = [f"${team[side]['usdPerHour']:,.2f}/h" for side in ("before", "after")]
    line = (f"persistent resource team-pool: replaced: {team['note']}; $/h at the least {least[0]} -> {least[1]} "
            f"(")
    # (in the comment, a line holding Markdown, here the note's `up`, is shown as text, in a code span)
    assert f"\n    {line}" in text and f"\n- ``{line}" in markdown
    assert f", at the most {most[0]} -> {most[1]} (" in text
    assert "\n        region us-central1 -> us-east4\n" in text and "\n  - region us-central1 -> us-east4\n" in markdown
    assert "\n        pool 0 disk the default -> pd-standard 200 GB\n" in text
