"""The real Pulumi engine, end to end: `pulumi up`, `refresh`, `destroy` on the `local` stack against the
emulator (its three Vertex AI jobs: an L4 on Spot VMs, a TPU v5e slice and a hyperparameter tuning job), then the
legacy API's `local-ai-platform` stack beside it. Mocks never run a dynamic provider, pickle it into state or diff
old state against new inputs; only the engine does, so this is where those pitfalls are pinned.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing
engine skips these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the emulator fixture)
    LOCAL_BUCKETS,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    project_fixture,
    require_pulumi,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

CUSTOM_CREATE, TUNING_CREATE = "customJobs.create", "hyperparameterTuningJobs.create"
#: The local stack's jobs, by resource name, and the stem of their job ids (the name, `_` for `-`).
LOCAL_JOBS = {"gpu-spot": "gpu_spot", "tpu-v5e": "tpu_v5e", "tune": "tune"}


def by_name(emulator: Emulator) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each resource's jobs (id, job), oldest first, by the stem of the job id."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for job_id, job in emulator.jobs().items():
        found.setdefault(job_id.rsplit("_", 1)[0], []).append((job_id, job))
    return found


def writes(emulator: Emulator, since: int) -> list[str]:
    """The calls since request number `since` that change anything (not a get or a list)."""
    return [str(r["method"]) for r in emulator.control("requests")[since:]
            if not str(r["method"]).endswith((".get", ".list"))]


project = project_fixture()


# The steps build on each other, in order, on one stack (as a user's successive `pulumi up`s do).

def test_up_creates_each_vertex_job_exactly_once_as_written(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    assert len(emulator.calls(CUSTOM_CREATE)) == 2 and len(emulator.calls(TUNING_CREATE)) == 1
    assert emulator.calls("jobs.create") == [], "nothing goes to the legacy API"
    jobs = {stem: found[0][1] for stem, found in by_name(emulator).items()}
    assert set(jobs) == set(LOCAL_JOBS.values())
    gpu = jobs["gpu_spot"]["jobSpec"]
    assert gpu["scheduling"] == {"strategy": "SPOT", "timeout": "7200s"}
    assert gpu["workerPoolSpecs"][0]["machineSpec"] == {"machineType": "g2-standard-8",
                                                        "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    assert gpu["workerPoolSpecs"][0]["containerSpec"]["args"] == [
        "--epochs=5", "--model-dir=gs://local-job-dir-bucket/jobs/gpu-spot"]
    (tpu,) = jobs["tpu_v5e"]["jobSpec"]["workerPoolSpecs"]
    assert tpu["machineSpec"] == {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"}
    tune = jobs["tune"]
    assert tune["name"].split("/")[-2] == "hyperparameterTuningJobs"
    assert (tune["maxTrialCount"], tune["parallelTrialCount"]) == (4, 2)
    assert tune["studySpec"]["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
    assert tune["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    assert all(job["labels"]["env"] == "local" for job in jobs.values())
    outputs = project.outputs()
    assert outputs["backend"] == "vertex"
    assert {name: job["state"] for name, job in outputs["jobs"].items()} == dict.fromkeys(LOCAL_JOBS, "QUEUED")
    assert project.resources("gcp:storage/bucket:Bucket") == []
    assert not any(r["type"].startswith("gcp:") for r in json.loads(project.state())["deployment"]["resources"])


def test_a_second_up_changes_nothing(project: Project, emulator: Emulator) -> None:
    before = len(emulator.control("requests"))
    done = project.pulumi("preview", "--expect-no-changes", "--diff")
    assert done.returncode == 0
    project.up()
    assert writes(emulator, before) == []


def test_a_label_change_replaces_the_vertex_job(project: Project, emulator: Emulator) -> None:
    """Vertex AI cannot change a job's labels in place (no customJobs.patch): the job is replaced."""
    ((old_id, _),) = by_name(emulator)["gpu_spot"]
    project.edit_job("gpu-spot", lambda job: job["labels"].update(team="speech"))
    preview = project.pulumi("preview", "--diff")
    assert "+-1 to replace" in preview.stdout, preview.stdout
    before = len(emulator.control("requests"))
    project.up()
    assert sorted(writes(emulator, before)) == ["customJobs.cancel", CUSTOM_CREATE]
    (_, old), (new_id, new) = by_name(emulator)["gpu_spot"]
    assert old["state"] == "JOB_STATE_CANCELLED" and new["labels"]["team"] == "speech"
    assert project.outputs()["jobs"]["gpu-spot"]["jobId"] == new_id


def test_a_tpu_topology_change_replaces_the_tpu_job(project: Project, emulator: Emulator) -> None:
    ((old_id, _),) = by_name(emulator)["tpu_v5e"]

    def two_vms(job: dict[str, Any]) -> None:
        job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["tpuTopology"] = "2x4"  # 8 chips on 2 TPU VMs
    project.edit_job("tpu-v5e", two_vms)
    preview = project.pulumi("preview", "--diff")
    assert "+-" in preview.stdout and "replace" in preview.stdout, preview.stdout
    project.up()
    assert len(emulator.calls(CUSTOM_CREATE)) == 4
    (_, old), (new_id, new) = by_name(emulator)["tpu_v5e"]
    assert old["state"] == "JOB_STATE_CANCELLED"
    assert new["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["tpuTopology"] == "2x4"
    assert project.outputs()["jobs"]["tpu-v5e"]["jobId"] == new_id


def test_refresh_records_the_jobs_state(project: Project, emulator: Emulator) -> None:
    emulator.control("phase", {"seconds": 0})
    project.pulumi("refresh", "--yes", "--skip-preview")
    states = {r["outputs"]["name"]: r["outputs"]["state"] for r in project.resources()}
    assert states == dict.fromkeys(LOCAL_JOBS, "SUCCEEDED")
    emulator.control("phase", {"seconds": 1000000})


def test_an_invalid_spec_fails_preview_with_the_field_named(project: Project, emulator: Emulator) -> None:
    def three_l4(job: dict[str, Any]) -> None:
        job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 3
    path = project.path / "stacks" / "Pulumi.local.yaml"
    saved = path.read_text()
    project.edit_job("gpu-spot", three_l4)
    try:
        done = project.pulumi("preview", ok=False)
        assert done.returncode != 0
        text = done.stdout + done.stderr
        assert "jobs.gpu-spot.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount: 3 NVIDIA_L4 on " \
            "g2-standard-8, which comes with exactly 1; allowed: 1" in text, text
    finally:
        path.write_text(saved)


def test_outputs_survive_an_update_where_only_the_provider_code_changed(project: Project) -> None:
    def outputs() -> dict[str, Any]:
        return {r["urn"]: {k: v for k, v in r["outputs"].items() if k != "__provider"} for r in project.resources()}
    before = outputs()
    provider = project.path / "gcp_training_jobs" / "resources" / "training_job" / "provider.py"
    provider.write_text(provider.read_text() + "\n# provider code changed\n")
    project.up()
    assert outputs() == before
    assert project.outputs()["jobs"]["tune"]["state"] == "SUCCEEDED"  # the stack outputs follow the refresh
    for resource in project.resources():
        for key in ("jobId", "state", "consoleUrl", "resourceName", "createTime"):
            assert resource["outputs"].get(key), (key, resource["outputs"])


def test_no_credential_or_endpoint_enters_the_state(project: Project, emulator: Emulator) -> None:
    port = f":{emulator.url.rsplit(':', 1)[1].strip('/')}"
    # the setting that refuses plaintext credentials is a config key the engine hands the provider, not a credential
    state = project.state().replace("plaintextCredentials", "plaintext-setting")
    for needle in ("Credentials", "access_token", "private_key", "Authorization", "refresh_token"):
        assert needle not in state, needle
    for resource in project.resources():  # the endpoint is stack config, never a job's input or output
        visible = {k: v for k, v in {**resource["inputs"], **resource["outputs"]}.items() if k != "__provider"}
        assert port not in json.dumps(visible)
        assert resource["inputs"]["__provider"]["4dabf18193072939515e22adb298388d"] == \
            "1b47061264138c4ac30d75fd1eb44270"  # Pulumi's secret signature: the pickled provider is encrypted
    plain = json.loads(project.pulumi("stack", "export", "--show-secrets").stdout)["deployment"]["resources"]
    for resource in (r for r in plain if r["type"].endswith("TrainingJob")):
        pickled = base64.b64decode(json.loads(resource["inputs"]["__provider"]["plaintext"]))
        for needle in (b"Credentials", b"httplib2", b"token", port.encode()):
            assert needle not in pickled, needle
        assert len(pickled) < 4096


def test_destroy_cancels_running_jobs_and_keeps_every_record(project: Project, emulator: Emulator) -> None:
    project.edit_job("gpu-spot", lambda job: job["jobSpec"]["scheduling"].update(timeout="3600s"))
    project.up()  # a new gpu-spot job, which stays QUEUED: the emulator's clock is frozen again
    running = list(emulator.live())
    assert len(running) == 1 and running[0].startswith("gpu_spot_")
    finished = {project.outputs()["jobs"][name]["jobId"] for name in ("tpu-v5e", "tune")}
    before = len(emulator.control("requests"))
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert project.resources() == []
    assert emulator.jobs()[running[0]]["state"] == "JOB_STATE_CANCELLED"
    assert writes(emulator, before) == ["customJobs.cancel"]
    assert finished <= set(emulator.jobs()), "a finished job's record is its history: it outlives its resource"


# --- The legacy API beside it: local-ai-platform, the guides' jobs on AI Platform Training (ml v1) ---------


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    return Project.copy(tmp_path_factory.mktemp("e2e-legacy"), PULUMI, emulator, stack="local-ai-platform")


def test_the_legacy_stack_creates_the_guides_jobs_on_ml_v1(legacy: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    legacy.up()
    assert len(emulator.calls("jobs.create")) == 2 and emulator.calls(CUSTOM_CREATE) == []
    jobs = {stem: found[0][1] for stem, found in by_name(emulator).items()}
    assert set(jobs) == {"gpu", "tpu"}
    tpu = jobs["tpu"]["trainingInput"]  # AI Platform runs the master beside its Cloud TPU, as written
    assert (tpu["masterType"], tpu["workerType"]) == ("n1-highcpu-16", "cloud_tpu")
    assert legacy.outputs()["backend"] == "ai-platform"


def test_a_label_change_updates_an_ml_v1_job_in_place(legacy: Project, emulator: Emulator) -> None:
    ((gpu_id, _),) = by_name(emulator)["gpu"]
    legacy.edit_job("gpu", lambda job: job.setdefault("labels", {}).update(team="speech"))
    preview = legacy.pulumi("preview", "--diff")
    assert "replace" not in preview.stdout.split("Resources:")[-1], preview.stdout
    legacy.up()
    assert len(emulator.calls("jobs.create")) == 2
    assert len(emulator.calls("jobs.patch")) == 1
    assert emulator.jobs()[gpu_id]["labels"]["team"] == "speech"


def test_an_accelerator_change_replaces_the_ml_v1_job_and_destroy_cancels_both(legacy: Project,
                                                                               emulator: Emulator) -> None:
    ((old_id, _),) = by_name(emulator)["gpu"]

    def four_t4(job: dict[str, Any]) -> None:
        job["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = 4
    legacy.edit_job("gpu", four_t4)
    legacy.up()
    (_, old), (new_id, new) = by_name(emulator)["gpu"]
    assert old["state"] == "CANCELLED"
    assert new["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] in (4, "4")
    assert legacy.outputs()["jobs"]["gpu"]["jobId"] == new_id
    legacy.pulumi("destroy", "--yes", "--skip-preview")
    assert legacy.resources() == [] and emulator.live() == {}
    assert len(emulator.calls("jobs.cancel")) == 3  # the replaced gpu job, then the live gpu and tpu jobs


# --- Vertex AI: a job in its own vocabulary, on current hardware, and what a merge does to it -------------

IMAGE = "us-central1-docker.pkg.dev/local-project/trainers/example:0.1"
VERTEX_STACK: dict[str, Any] = offline_config(
    "local",
    {"l4": {"jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                             "acceleratorCount": 1},
                             "replicaCount": 1,
                             "containerSpec": {"imageUri": IMAGE, "args": ["--model-dir=${jobDir}"]}}],
        "scheduling": {"strategy": "SPOT"}}}},
    buckets=LOCAL_BUCKETS, labels={"env": "local"},
    guardrails={"allowedAccelerators": ["NVIDIA_L4"], "requiredLabels": ["env"], "spotOnly": True},
)


@pytest.fixture(scope="module")
def vertex(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    return Project.copy(tmp_path_factory.mktemp("e2e-vertex"), PULUMI, emulator, stack="vertex",
                        config=VERTEX_STACK)


def two_l4(job: dict[str, Any]) -> None:
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"].update(machineType="g2-standard-24", acceleratorCount=2)


def test_a_vertex_job_spec_on_l4_spot_is_created_as_written(vertex: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    preview = vertex.pulumi("preview")
    # the provider's check: one info line per job, g2-standard-8 with its L4 on Spot, no timeout: 7 days
    assert "job l4: $0.61/h (SPOT, at Spot rates), on demand $0.98/h, worst case $102.13 (168 h, no timeout set), " \
        "us-central1; basis: Compute Engine list 2026-07-30" in preview.stdout + preview.stderr
    vertex.up()
    (create,) = emulator.calls("customJobs.create")
    (job,) = emulator.jobs().values()
    spec = job["jobSpec"]
    assert spec["scheduling"]["strategy"] == "SPOT"
    assert spec["workerPoolSpecs"][0]["machineSpec"] == {"machineType": "g2-standard-8",
                                                         "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    assert spec["workerPoolSpecs"][0]["containerSpec"]["args"] == ["--model-dir=gs://local-job-dir-bucket/jobs/l4"]
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://local-job-dir-bucket/jobs/l4"}
    assert job["labels"]["env"] == "local"
    assert vertex.outputs()["jobs"]["l4"]["state"] == "QUEUED"
    assert vertex.pulumi("preview", "--expect-no-changes").returncode == 0


def test_a_preview_that_replaces_a_running_job_says_it_will_be_cancelled(vertex: Project) -> None:
    (resource,) = vertex.resources()
    vertex.edit_job("l4", two_l4)
    preview = vertex.pulumi("preview", "--diff")
    text = preview.stdout + preview.stderr
    assert f"replacing job l4 (QUEUED since {resource['outputs']['createTime']}): the running job will be " \
        "cancelled" in text, text
    assert "+-" in preview.stdout


def test_a_protected_running_job_fails_the_preview_and_the_up(vertex: Project, emulator: Emulator) -> None:
    path = vertex.path / "stacks" / "Pulumi.vertex.yaml"
    saved = path.read_text()
    vertex.edit_job("l4", lambda job: job.update(protect=True))
    try:
        for command in (("preview",), ("up", "--yes", "--skip-preview")):
            done = vertex.pulumi(*command, ok=False)
            text = done.stdout + done.stderr
            assert done.returncode != 0, text
            assert "gcp-training-jobs:jobs.l4.protect: replacing job l4 (QUEUED since" in text, text
            assert "and job l4 is protected" in text
        assert len(emulator.calls("customJobs.create")) == 1 and len(emulator.live()) == 1
    finally:
        path.write_text(saved)


def test_an_unprotected_replace_cancels_the_old_job_and_a_retained_job_outlives_destroy(
        vertex: Project, emulator: Emulator) -> None:
    (old_id,) = emulator.jobs()
    vertex.up()  # the two-L4 change, unprotected now
    jobs = emulator.jobs()
    (new_id,) = [j for j in jobs if j != old_id]
    assert jobs[old_id]["state"] == "JOB_STATE_CANCELLED"
    assert jobs[new_id]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] == 2
    vertex.edit_job("l4", lambda job: job.update(retainOnDelete=True))
    vertex.up()
    vertex.pulumi("destroy", "--yes", "--skip-preview")
    assert vertex.resources() == []
    assert emulator.jobs()[new_id]["state"] == "JOB_STATE_QUEUED", "retainOnDelete: the job outlives its stack"
