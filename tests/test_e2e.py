"""The real Pulumi engine, end to end: `pulumi up`, `refresh`, `destroy` on the `local` stack against the
emulator. Mocks never run a dynamic provider, pickle it into state or diff old state against new inputs;
only the engine does, so this is where those pitfalls are pinned.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing
engine skips these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.e2e_support import Emulator, Project, process_emulator, require_pulumi  # noqa: F401 (the emulator fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()



@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    return Project.copy(tmp_path_factory.mktemp("e2e"), PULUMI, emulator)


# The steps build on each other, in order, on one stack (as a user's successive `pulumi up`s do).

def test_up_creates_each_job_exactly_once(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    creates = emulator.calls("jobs.create")
    assert len(creates) == 2, creates
    assert {j.split("_")[0] for j in emulator.jobs()} == {"gpu", "tpu"}
    outputs = project.outputs()
    assert set(outputs["jobs"]) == {"gpu", "tpu"}
    assert outputs["jobs"]["gpu"]["state"] == "QUEUED"
    assert project.resources("gcp:storage/bucket:Bucket") == []
    assert not any(r["type"].startswith("gcp:") for r in json.loads(project.state())["deployment"]["resources"])


def test_a_second_up_changes_nothing(project: Project, emulator: Emulator) -> None:
    before = len(emulator.control("requests"))
    done = project.pulumi("preview", "--expect-no-changes", "--diff")
    assert done.returncode == 0
    project.up()
    assert emulator.calls("jobs.create")[2:] == []
    assert [r["method"] for r in emulator.control("requests")[before:] if r["method"] != "jobs.get"] == []


def test_a_label_change_updates_in_place(project: Project, emulator: Emulator) -> None:
    (gpu_id,) = [j for j in emulator.jobs() if j.startswith("gpu_")]
    project.edit_job("gpu", lambda job: job.setdefault("labels", {}).update(team="speech"))
    preview = project.pulumi("preview", "--diff")
    assert "replace" not in preview.stdout.split("Resources:")[-1], preview.stdout
    project.up()
    assert len(emulator.calls("jobs.create")) == 2
    assert len(emulator.calls("jobs.patch")) == 1
    assert emulator.jobs()[gpu_id]["labels"]["team"] == "speech"


def test_an_accelerator_change_replaces_the_job(project: Project, emulator: Emulator) -> None:
    (old_id,) = [j for j in emulator.jobs() if j.startswith("gpu_")]

    def four_t4(job: dict[str, Any]) -> None:
        job["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = 4
    project.edit_job("gpu", four_t4)
    preview = project.pulumi("preview", "--diff")
    assert "+-" in preview.stdout and "replace" in preview.stdout, preview.stdout
    project.up()
    assert len(emulator.calls("jobs.create")) == 3
    jobs = emulator.jobs()
    (new_id,) = [j for j in jobs if j.startswith("gpu_") and j != old_id]
    assert jobs[old_id]["state"] == "CANCELLED"
    assert jobs[new_id]["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] in (4, "4")
    assert project.outputs()["jobs"]["gpu"]["jobId"] == new_id


def test_refresh_records_the_jobs_state(project: Project, emulator: Emulator) -> None:
    emulator.control("phase", {"seconds": 0})
    project.pulumi("refresh", "--yes", "--skip-preview")
    states = {r["outputs"]["jobId"].split("_")[0]: r["outputs"]["state"] for r in project.resources()}
    assert states == {"gpu": "SUCCEEDED", "tpu": "SUCCEEDED"}
    emulator.control("phase", {"seconds": 1000000})


def test_an_invalid_spec_fails_preview_with_the_field_named(project: Project, emulator: Emulator) -> None:
    def three_t4(job: dict[str, Any]) -> None:
        job["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = 3
    path = project.path / "stacks" / "Pulumi.local.yaml"
    saved = path.read_text()
    project.edit_job("gpu", three_t4)
    try:
        done = project.pulumi("preview", ok=False)
        assert done.returncode != 0
        text = done.stdout + done.stderr
        assert "trainingInput.masterConfig.acceleratorConfig.count" in text, text
        assert "allowed: 1, 2, 4" in text
    finally:
        path.write_text(saved)


def test_outputs_survive_an_update_where_only_the_provider_code_changed(project: Project) -> None:
    def outputs() -> dict[str, Any]:
        return {r["urn"]: {k: v for k, v in r["outputs"].items() if k != "__provider"} for r in project.resources()}
    before = outputs()
    provider = project.path / "components" / "resources" / "job_provider.py"
    provider.write_text(provider.read_text() + "\n# provider code changed\n")
    project.up()
    assert outputs() == before
    assert project.outputs()["jobs"]["tpu"]["state"] == "SUCCEEDED"  # the stack outputs follow the refresh
    for resource in project.resources():
        for key in ("jobId", "state", "consoleUrl", "resourceName", "createTime"):
            assert resource["outputs"].get(key), (key, resource["outputs"])


def test_no_credential_or_endpoint_enters_the_state(project: Project, emulator: Emulator) -> None:
    port = f":{emulator.url.rsplit(':', 1)[1].strip('/')}"
    state = project.state()
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


def test_destroy_cancels_running_jobs_and_leaves_finished_ones(project: Project, emulator: Emulator) -> None:
    def two_t4(job: dict[str, Any]) -> None:
        job["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = 2
    project.edit_job("gpu", two_t4)
    project.up()  # a new gpu job, which stays QUEUED: the emulator's clock is frozen again
    running = [j for j, job in emulator.jobs().items() if job["state"] in ("QUEUED", "PREPARING", "RUNNING")]
    assert len(running) == 1 and running[0].startswith("gpu_")
    cancels = len(emulator.calls("jobs.cancel"))
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert project.resources() == []
    assert emulator.jobs()[running[0]]["state"] == "CANCELLED"
    assert len(emulator.calls("jobs.cancel")) == cancels + 1  # the finished tpu job is left as it is


# --- Vertex AI: a job in its own vocabulary, on current hardware, and what a merge does to it -------------

IMAGE = "us-central1-docker.pkg.dev/local-project/trainers/example:0.1"
VERTEX_STACK: dict[str, Any] = {
    "gcp:project": "local-project",
    "gcp:region": "us-central1",
    "gcp-training-jobs:backend": "vertex",
    "gcp-training-jobs:enableApis": False,
    "gcp-training-jobs:labels": {"env": "local"},
    "gcp-training-jobs:buckets": {"staging": "local-staging-bucket", "jobDir": "local-job-dir-bucket"},
    "gcp-training-jobs:guardrails": {"allowedAccelerators": ["NVIDIA_L4"], "requiredLabels": ["env"],
                                     "spotOnly": True},
    "gcp-training-jobs:jobs": {"l4": {"jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                             "acceleratorCount": 1},
                             "replicaCount": 1,
                             "containerSpec": {"imageUri": IMAGE, "args": ["--model-dir=${jobDir}"]}}],
        "scheduling": {"strategy": "SPOT"}}}},
}


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
