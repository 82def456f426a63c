"""The provider package (`gcp-training-jobs:index:TrainingJob`, provider/) from a Pulumi YAML program, under the real
engine against the emulator (a separate process): the package added to the project with `pulumi package add`, a
job made with `pulumi up` and its outputs read back; a spec Google refuses fails `pulumi preview` with the judge's
words, before any call to the API.

Needs the `pulumi` CLI and the YAML language host (`pulumi-language-yaml`, which scripts/install-pulumi-engine.sh
builds beside the engine; the official CLI ships it). Outside CI a missing one skips these tests, saying which and
why; under CI (CI=true, where .ci/run builds both) it fails them.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e_support import ROOT, Emulator, Project, engine_env, process_emulator, require_pulumi  # noqa: F401

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
PLUGIN = ROOT / "provider"
TYPE = "gcp-training-jobs:index:TrainingJob"
IMAGE = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"


def _yaml_host() -> str | None:
    beside = Path(PULUMI).parent / "pulumi-language-yaml"
    return str(beside) if beside.exists() else shutil.which("pulumi-language-yaml")


if _yaml_host() is None:
    MISSING = ("no pulumi-language-yaml beside the engine or on PATH: Pulumi YAML programs cannot run "
               "(scripts/install-pulumi-engine.sh builds it from github.com/pulumi/pulumi-yaml; see "
               "docs/provider-package.md)")
    if os.environ.get("CI"):
        pytest.fail(f"{MISSING}: .ci/run builds it", pytrace=False)
    warnings.warn(MISSING, stacklevel=1)  # in the run's warnings summary, not only in -rs
    pytest.skip(MISSING, allow_module_level=True)


def program(accelerators: int = 1, args: tuple[str, ...] = ("--epochs=5",)) -> dict[str, Any]:
    """A team's Pulumi YAML program: one job, its parts written as a stack file's `jobs.NAME` holds them."""
    return {
        "name": "team-yaml",
        "runtime": "yaml",
        "resources": {"train": {"type": TYPE, "properties": {
            "project": "team-project",
            "region": "us-central1",
            "labels": {"team": "vision"},
            "jobSpec": {"workerPoolSpecs": [{
                "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                "acceleratorCount": accelerators},
                "replicaCount": 1,
                "containerSpec": {"imageUri": IMAGE, "args": list(args)}}],
                "scheduling": {"timeout": "7200s"}},
        }}},
        "outputs": {"state": "${train.state}", "resourceName": "${train.resourceName}",
                    "costUsd": "${train.costUsd}"},
    }


def write_program(path: Path, data: dict[str, Any]) -> None:
    """The program, keeping the `packages:` that `pulumi package add` wrote into Pulumi.yaml."""
    file = path / "Pulumi.yaml"
    kept = yaml.safe_load(file.read_text()).get("packages") if file.exists() else None
    file.write_text(yaml.safe_dump({**data, **({"packages": kept} if kept else {})}, sort_keys=False))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    base = tmp_path_factory.mktemp("yaml-package")
    path = base / "team-yaml"
    path.mkdir()
    write_program(path, program())
    (base / "state").mkdir()
    made = Project(path, engine_env(base, PULUMI), PULUMI, "dev")
    made.pulumi("stack", "init")
    made.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", emulator.url)
    return made


def test_package_add_records_the_package_in_the_project(project: Project) -> None:
    added = project.pulumi("package", "add", str(PLUGIN))
    packages = yaml.safe_load((project.path / "Pulumi.yaml").read_text()).get("packages") or {}
    assert "gcp-training-jobs" in packages, (added.stdout, added.stderr)


def test_a_yaml_program_makes_a_job_and_reads_its_outputs(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    creates = emulator.calls("customJobs.create")
    assert len(creates) == 1
    (job,) = emulator.jobs().values()
    pool = job["jobSpec"]["workerPoolSpecs"][0]
    assert pool["machineSpec"] == {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                   "acceleratorCount": 1}
    assert pool["containerSpec"]["args"] == ["--epochs=5"]
    assert job["labels"]["team"] == "vision"
    outputs = project.outputs()
    assert outputs["state"] == "QUEUED"
    assert outputs["resourceName"].startswith("projects/team-project/locations/us-central1/customJobs/")
    (resource,) = project.resources(TYPE)
    assert resource["type"] == TYPE and "__provider" not in resource["outputs"]
    before = len(emulator.control("requests"))
    project.up()  # the same program again: nothing made, nothing replaced
    assert [r["method"] for r in emulator.control("requests")[before:]
            if not str(r["method"]).endswith((".get", ".list"))] == []


def test_a_spec_google_refuses_fails_preview_with_the_judges_words(project: Project, emulator: Emulator) -> None:
    write_program(project.path, program(accelerators=3))  # g2-standard-8 comes with one L4
    before = len(emulator.control("requests"))
    preview = project.pulumi("preview", ok=False)
    assert preview.returncode != 0
    said = preview.stdout + preview.stderr
    assert "acceleratorCount" in said and "g2-standard-8" in said, said
    assert "Traceback" not in said
    assert [r["method"] for r in emulator.control("requests")[before:] if r["method"].endswith("create")] == []
    write_program(project.path, program())
    project.pulumi("destroy", "--yes", "--skip-preview")
