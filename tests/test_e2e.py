"""The real Pulumi engine, end to end: `pulumi up`, `refresh`, `destroy` on the `local` stack against the
emulator. Mocks never run a dynamic provider, pickle it into state or diff old state against new inputs;
only the engine does, so this is where those pitfalls are pinned.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing
engine skips these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CACHE = Path(os.environ.get("PULUMI_ENGINE_CACHE", Path.home() / ".cache/gcp-training-jobs/pulumi-engine"))
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "components", "trainers", "requirements.txt")


def find_pulumi() -> str | None:
    found = shutil.which("pulumi")
    if found:
        return found
    built = sorted(ENGINE_CACHE.glob("v*/bin/pulumi"))
    return str(built[-1]) if built else None


PULUMI = find_pulumi()
if PULUMI is None:
    if os.environ.get("CI"):
        pytest.fail("no pulumi CLI: .ci/run must build it with scripts/install-pulumi-engine.sh",
                    pytrace=False)
    pytest.skip("no pulumi CLI on PATH or in the engine cache (scripts/install-pulumi-engine.sh)",
                allow_module_level=True)


@dataclass
class Emulator:
    """The emulator as a separate process, driven through its HTTP control endpoints."""

    url: str
    process: subprocess.Popen[str]

    def control(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + "_emulator/" + path, data=data, method="POST" if data else "GET",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"null")

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.control("requests") if r["method"] == method]

    def jobs(self) -> dict[str, dict[str, Any]]:
        return {j["job"]["jobId"]: j["job"] for j in self.control("jobs")}


@dataclass
class Project:
    """A copy of the project in a temporary folder, with its own file state backend."""

    path: Path
    env: dict[str, str]

    def pulumi(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([PULUMI, *args, "--stack", "local", "--non-interactive"], cwd=self.path,  # type: ignore[list-item]
                              env=self.env, capture_output=True, text=True, timeout=300)
        if ok and done.returncode != 0:
            raise AssertionError(f"pulumi {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def up(self) -> subprocess.CompletedProcess[str]:
        return self.pulumi("up", "--yes", "--skip-preview")

    def outputs(self) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "output", "--json", "--show-secrets").stdout)

    def state(self) -> str:
        return self.pulumi("stack", "export").stdout

    def resources(self, type_suffix: str = "TrainingJob") -> list[dict[str, Any]]:
        deployment = json.loads(self.state())["deployment"]
        return [r for r in deployment.get("resources", []) if r["type"].endswith(type_suffix)]

    def edit_job(self, name: str, change: Any) -> None:
        """Change one job of stacks/Pulumi.local.yaml in place (the stack file a user would edit)."""
        path = self.path / "stacks" / "Pulumi.local.yaml"
        data = yaml.safe_load(path.read_text())
        change(data["config"]["gcp-training-jobs:jobs"][name])
        path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    process = subprocess.Popen([sys.executable, "-m", "components", "emulator", "--port", "0",
                                "--phase-seconds", "1000000"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "listening on" in line, line
    yield Emulator(line.split("listening on", 1)[1].strip(), process)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    base = tmp_path_factory.mktemp("e2e")
    path = base / "project"
    path.mkdir()
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__", ".build"))
        else:
            shutil.copy2(source, path / name)
    (path / "stacks").mkdir()
    shutil.copy2(ROOT / "stacks" / "Pulumi.local.yaml", path / "stacks" / "Pulumi.local.yaml")
    (path / "venv").symlink_to(ROOT / "venv")
    env = {
        "PATH": f"{Path(PULUMI).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",  # type: ignore[arg-type]
        "HOME": str(base / "home"),
        "PULUMI_HOME": str(base / "pulumi-home"),
        "PULUMI_BACKEND_URL": f"file://{base / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "e2e-passphrase",
        "PULUMI_SKIP_UPDATE_CHECK": "1",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
        "PULUMI_PYTHON_CMD": str(ROOT / "venv" / "bin" / "python"),
        "GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": "0.01",
    }
    (base / "state").mkdir()
    project = Project(path, env)
    project.pulumi("stack", "init")
    project.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", emulator.url)
    return project


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
    provider = project.path / "components" / "resources" / "training_job.py"
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
