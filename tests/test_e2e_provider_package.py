"""The provider package (`gcp-training-jobs:index:TrainingJob`, provider/) under the real engine against the emulator
(a separate process): `pulumi package add` reads the plugin's schema; a Pulumi YAML program with the package in its
`packages:` makes a job with `pulumi up` and reads its outputs, a second `up` changes nothing, and a spec Google
refuses fails `pulumi preview` with the judge's words, before any call to the API; `pulumi preview --diff` names the
changed field of a job holding a credential and never shows it; `pulumi import` takes a job made outside Pulumi; and
a stack deployed with the Python dynamic resource moves to the package by an alias, updated in place (no job made or
cancelled).

The plugin is its executable form, `provider/bin` (docs/provider-package.md says why: the engine built here runs the
Python language host of sdk v3.79, which cannot start a `runtime: python` plugin).

Needs the `pulumi` CLI and the YAML language host (`pulumi-language-yaml`, which scripts/install-pulumi-engine.sh
builds beside the engine; the official CLI ships it). Outside CI a missing one skips these tests, saying which and
why; under CI (CI=true, where .ci/run builds both) it fails them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec.core.version import __version__
from tests.e2e_support import ROOT, Emulator, Project, engine_env, process_emulator, require_pulumi  # noqa: F401

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
PLUGIN = ROOT / "provider" / "bin"
EXECUTABLE = PLUGIN / "pulumi-resource-gcp-training-jobs"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape
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
    """The program, with the package in its `packages:` (what `pulumi package add` records): the plugin's folder."""
    (path / "Pulumi.yaml").write_text(yaml.safe_dump({**data, "packages": {"gcp-training-jobs": str(PLUGIN)}},
                                                     sort_keys=False))


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


def test_package_add_reads_the_plugins_schema(tmp_path: Path) -> None:
    """`pulumi package add` starts the plugin, reads its schema and writes the package's SDK for the program's
    language (for YAML, its declaration); recording it in Pulumi.yaml is the language host's part (below)."""
    path = tmp_path / "adding"
    path.mkdir()
    (path / "Pulumi.yaml").write_text(yaml.safe_dump(program(), sort_keys=False))
    (tmp_path / "state").mkdir()
    adding = Project(path, engine_env(tmp_path, PULUMI), PULUMI, "dev")
    adding.pulumi("stack", "init")
    done = subprocess.run([PULUMI, "package", "add", str(EXECUTABLE)], cwd=path, env=adding.env,
                          capture_output=True, text=True, timeout=300)
    (declaration,) = (path / "sdks" / "gcp-training-jobs").glob("*.yaml")
    assert yaml.safe_load(declaration.read_text())["name"] == "gcp-training-jobs", (done.stdout, done.stderr)
    assert yaml.safe_load(declaration.read_text())["version"] == __version__


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


def test_preview_diff_names_the_changed_field_and_never_shows_a_credential(project: Project,
                                                                          emulator: Emulator) -> None:
    write_program(project.path, program(args=("--epochs=5", f"--token={TOKEN}")))
    project.up()
    assert TOKEN not in project.state()  # secret where it stands: ciphertext in the state
    (resource,) = project.resources(TYPE)
    args = resource["inputs"]["job"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
    assert args[0] == "--epochs=5" and "ciphertext" in args[1]
    write_program(project.path, program(args=("--epochs=6", f"--token={TOKEN}")))
    preview = project.pulumi("preview", "--diff")
    assert TOKEN not in preview.stdout + preview.stderr
    changed = [line for line in preview.stdout.splitlines() if "=>" in line and "[" in line.split("=>")[0]]
    assert len(changed) == 1 and "--epochs=5" in changed[0] and "--epochs=6" in changed[0], preview.stdout
    assert "--token" not in preview.stdout  # the unchanged secret arg is not shown at all
    write_program(project.path, program())
    project.up()


def test_import_takes_a_job_made_outside_and_its_declaration_changes_nothing(project: Project,
                                                                           emulator: Emulator) -> None:
    body = {"displayName": "outside", "labels": {"team": "nlp"}, "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}]}}
    request = urllib.request.Request(
        f"{emulator.url}v1/projects/team-project/locations/us-central1/customJobs", json.dumps(body).encode(),
        {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:  # as gcloud or the Vertex AI SDK would
        name = json.loads(answer.read())["name"]
    project.pulumi("import", TYPE, "outside", name, "--yes", "--generate-code=false")
    imported = next(r for r in project.resources(TYPE) if r["urn"].endswith("::outside"))
    assert imported["id"] == name
    assert imported["inputs"]["job"]["labels"] == {"team": "nlp"}
    declared = program()
    declared["resources"]["outside"] = {"type": TYPE, "properties": {
        "project": "team-project", "region": "us-central1", "labels": {"team": "nlp"}, "jobSpec": body["jobSpec"]}}
    write_program(project.path, declared)
    before = len(emulator.control("requests"))
    project.up()
    assert [r["method"] for r in emulator.control("requests")[before:]
            if not str(r["method"]).endswith((".get", ".list"))] == []
    write_program(project.path, program())
    project.pulumi("state", "delete", imported["urn"], "--yes")  # the job stays Google's: not this test's to end


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


OLD_PROGRAM = '''import pulumi
from gcp_training_jobs import TrainingJob, TrainingJobArgs
JOB = JOB_DATA
job = TrainingJob("l4-trial", TrainingJobArgs(project="team-project", job=JOB))
pulumi.export("jobId", job.jobId)
'''
#: The same job declared with the package's resource (a generated SDK's class registers the same), aliased to the
#: dynamic resource's type: the engine takes it as the same resource.
NEW_PROGRAM = '''import pulumi
JOB = JOB_DATA
job = pulumi.CustomResource("gcp-training-jobs:index:TrainingJob", "l4-trial",
                            {"project": "team-project", "job": JOB, "jobId": None},
                            pulumi.ResourceOptions(aliases=[pulumi.Alias(type_="pulumi-python:dynamic/training:TrainingJob")]))
pulumi.export("jobId", job.jobId)
'''


def test_a_dynamic_resources_stack_moves_to_the_package_by_an_alias_updated_in_place(
        tmp_path: Path, emulator: Emulator) -> None:
    job = {"region": "us-central1", "labels": {"team": "vision"}, "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}]}}
    consumer = Project.consumer(tmp_path, PULUMI, emulator, "team-training", OLD_PROGRAM.replace("JOB_DATA", repr(job)))
    consumer.env["PATH"] = f"{PLUGIN}:{consumer.env['PATH']}"  # the package's plugin, found on PATH
    consumer.up()
    (before,) = consumer.resources("TrainingJob")
    assert before["type"] == "pulumi-python:dynamic/training:TrainingJob" and "__provider" in before["outputs"]
    (consumer.path / "__main__.py").write_text(NEW_PROGRAM.replace("JOB_DATA", repr(job)))
    since = len(emulator.control("requests"))
    consumer.up()
    assert [r["method"] for r in emulator.control("requests")[since:]
            if not str(r["method"]).endswith((".get", ".list"))] == []  # nothing made, nothing cancelled
    (after,) = consumer.resources("TrainingJob")
    assert after["type"] == TYPE and after["id"] == before["id"] and "__provider" not in after["outputs"]
    assert after["outputs"]["jobId"] == before["outputs"]["jobId"]
    consumer.pulumi("preview", "--expect-no-changes")  # fails (exit 255) on any change
