"""The provider package (`gcp-training-jobs:index:TrainingJob`) declared by a TypeScript program, under the real engine
against the emulator (a separate process): the fixture tests/fixtures/typescript-job, installed with `npm ci` from its
lock into a copy (once for the module), its Pulumi.yaml's `packages:` naming the plugin's executable form
(provider/bin). `pulumi up` makes exactly one job and its outputs are read; a second `up` changes nothing (`pulumi
preview --expect-no-changes` passes first); `pulumi destroy` cancels the job.

Needs the `pulumi` CLI, a Node.js language host (`pulumi-language-nodejs`: the one scripts/install-pulumi-engine.sh
builds beside the engine from sdk/v3@v3.68.0, or the official CLI's), and `node` and `npm` on PATH. Outside CI a
missing one skips these tests, saying which and why; under CI (CI=true, where .ci/run builds the host) it fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import pytest
import yaml

from tests.e2e_support import (  # noqa: F401 (process_emulator: the emulator fixture)
    ROOT,
    Emulator,
    Project,
    beside_engine,
    engine_env,
    process_emulator,
    require_pulumi,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
FIXTURE = ROOT / "tests" / "fixtures" / "typescript-job"
PLUGIN = ROOT / "provider" / "bin"
TYPE = "gcp-training-jobs:index:TrainingJob"
IMAGE = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"
#: The calls that change a job at Google (everything but reads).
READS = (".get", ".list")


MISSING = ""
if beside_engine(PULUMI, "pulumi-language-nodejs") is None:
    MISSING = ("no pulumi-language-nodejs beside the engine or on PATH: TypeScript programs cannot run "
               "(scripts/install-pulumi-engine.sh builds it from sdk/v3@v3.68.0; see docs/provider-package.md)")
elif shutil.which("node") is None or shutil.which("npm") is None:
    MISSING = "no node or npm on PATH: the TypeScript program cannot be installed or run"
if MISSING:
    if os.environ.get("CI"):
        pytest.fail(f"{MISSING}: .ci/run must provide it", pytrace=False)
    warnings.warn(MISSING, stacklevel=1)  # in the run's warnings summary, not only in -rs
    pytest.skip(MISSING, allow_module_level=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    """The fixture copied and installed (`npm ci`, its lock's versions and integrity hashes, no install scripts),
    the plugin named in its Pulumi.yaml's `packages:`, a stack pointed at the emulator."""
    base = tmp_path_factory.mktemp("typescript-job")
    path = base / "team-typescript"
    shutil.copytree(FIXTURE, path, ignore=shutil.ignore_patterns("node_modules", "bin"))
    declared = yaml.safe_load((path / "Pulumi.yaml").read_text())
    (path / "Pulumi.yaml").write_text(yaml.safe_dump({**declared, "packages": {"gcp-training-jobs": str(PLUGIN)}},
                                                     sort_keys=False))
    installed = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
                               cwd=path, capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, (installed.stdout, installed.stderr)
    (base / "state").mkdir()
    made = Project(path, engine_env(base, PULUMI), PULUMI, "dev")
    made.pulumi("stack", "init")
    made.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", emulator.url)
    return made


def deployed(project: Project) -> dict[str, object]:
    """The stack's one TrainingJob, made by `pulumi up` when a test runs alone."""
    if not project.resources(TYPE):
        project.up()
    (resource,) = project.resources(TYPE)
    return resource


def changes(emulator: Emulator, since: int) -> list[str]:
    return [r["method"] for r in emulator.control("requests")[since:] if not str(r["method"]).endswith(READS)]


def test_a_typescript_program_makes_one_job_and_reads_its_outputs(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    assert len(emulator.calls("customJobs.create")) == 1
    (job,) = emulator.jobs().values()
    (pool,) = job["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                   "acceleratorCount": 1}
    assert pool["containerSpec"]["imageUri"] == IMAGE
    assert job["labels"]["team"] == "vision"
    outputs = project.outputs()
    assert outputs["state"] == "QUEUED"
    assert outputs["resourceName"] == job["name"]
    assert outputs["resourceName"].startswith("projects/team-project/locations/us-central1/customJobs/")
    (resource,) = project.resources(TYPE)
    assert resource["type"] == TYPE and resource["id"] == job["name"]


def test_a_second_up_changes_nothing(project: Project, emulator: Emulator) -> None:
    before = deployed(project)
    since = len(emulator.control("requests"))
    project.pulumi("preview", "--expect-no-changes")  # fails (exit 255) on any change
    project.up()
    assert changes(emulator, since) == []  # nothing made, replaced or cancelled
    (after,) = project.resources(TYPE)
    assert after["id"] == before["id"] and after["outputs"] == before["outputs"]


def test_destroy_cancels_the_job(project: Project, emulator: Emulator) -> None:
    name = deployed(project)["id"]
    since = len(emulator.control("requests"))
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert changes(emulator, since) == ["customJobs.cancel"]
    assert [r["path"] for r in emulator.calls("customJobs.cancel")][-1] == f"/v1/{name}:cancel"
    (job,) = [j["job"] for j in emulator.control("jobs") if j["name"] == name]
    assert job["state"] in {"JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"}
    assert project.resources(TYPE) == []
