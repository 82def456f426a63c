"""The real engine with a stack file's jobs as the provider package's resource (`gcp-training-jobs:jobResource:
package`, resources/package/resource.py), against the emulator as a separate process: this tree's stack program
registers each job as `gcp-training-jobs:index:TrainingJob` (aliased to the dynamic resource's type) through one
explicit provider configured with the stack's config, served by the package's executable plugin (provider/bin, found
on PATH or named in the project's Pulumi.yaml).

- A stack deployed with the dynamic resource moves to the package by setting the key: each job an update in place
  whose calls to Vertex AI are reads only; the same id, jobId and identity; no pickle left; the next preview has
  no changes; a destroy cancels exactly the jobs.
- The stack's plan is the package's too (judged once per run from the stack's config the provider is given): a
  stack over quota fails its preview naming what the stack's earlier new jobs take, by the stack's key, as the
  dynamic resource's check does; a job alone would be placed beside the live jobs only.

Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec.core.version import __version__
from tests.e2e_support import (  # noqa: F401 (process_emulator: the emulator fixture)
    CANCELLED,
    ROOT,
    RUNNING,
    TO_RUNNING_SECONDS,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    require_pulumi,
)
from tests.helpers import install_wheel

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
PLUGIN = ROOT / "provider" / "bin"
OLD_TYPE = "pulumi-python:dynamic/training:TrainingJob"
NEW_TYPE = "gcp-training-jobs:index:TrainingJob"
STACK = "local"
L4 = "custom_model_training_nvidia_l4_gpus"
#: The steps the move may take: the explicit provider made, each job the same resource (its provider changes; the
#: package's diff finds its inputs the same) or updated in place.
MOVE_OPS = {"same", "create", "update"}
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape


def l4_spec(*args: str) -> dict[str, Any]:
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/pkg-project/trainers/t:1",
                                             "args": list(args)}}],
        "scheduling": {"timeout": "7200s"}}


def project_of(tmp_path: Path, emulator: Emulator, jobs: dict[str, Any], *, named: bool = False,
               **keys: Any) -> Project:
    """This tree's project with a stack of `jobs` (no `gcp:` resources), the package's plugin on PATH, or (`named`)
    named in its Pulumi.yaml's `plugins:` (the folder a project names: docs/provider-package.md)."""
    project = Project.copy(tmp_path, PULUMI, emulator, stack=STACK, config=offline_config("pkg", jobs, **keys))
    if named:
        declared = yaml.safe_load((project.path / "Pulumi.yaml").read_text())
        declared["plugins"] = {"providers": [{"name": "gcp-training-jobs", "path": str(PLUGIN)}]}
        (project.path / "Pulumi.yaml").write_text(yaml.safe_dump(declared, sort_keys=False))
    else:
        project.env["PATH"] = f"{PLUGIN}:{project.env['PATH']}"
    return project


def writes_since(emulator: Emulator, since: int) -> list[str]:
    """The API methods called since request `since` that are not reads (.get, .list)."""
    return [str(r["method"]) for r in emulator.control("requests")[since:]
            if not str(r["method"]).endswith((".get", ".list"))]


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::gcp-training-jobs::{type_}::{name}"


def test_a_stack_moves_its_jobs_to_the_package_by_an_update_in_place(tmp_path: Path, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project = project_of(tmp_path, emulator, {
        "first": {"jobSpec": l4_spec("--epochs=5")},
        "second": {"jobSpec": l4_spec(), "labels": {"team": "vision"}}})
    project.up()
    emulator.control("advance", {"seconds": TO_RUNNING_SECONDS})
    live = {job["labels"]["pulumi-job"]: job for job in emulator.jobs().values()}
    assert {job["state"] for job in live.values()} == {RUNNING["vertex"]} and len(live) == 2
    before = {r["urn"].rsplit("::", 1)[1]: r for r in project.resources()}
    assert {r["type"] for r in before.values()} == {OLD_TYPE}

    project.edit_config(lambda config: config.update({"gcp-training-jobs:jobResource": "package"}))
    since = len(emulator.control("requests"))
    preview = json.loads(project.pulumi("preview", "--json", "--show-sames").stdout)
    steps = {step["urn"]: step for step in preview["steps"]}
    assert {step["op"] for step in steps.values()} <= MOVE_OPS, json.dumps(
        [preview["steps"], preview.get("diagnostics")], indent=1)
    for name in before:  # each job: the new URN, the old resource's (its inputs the same: no diff)
        assert steps[urn(NEW_TYPE, name)]["op"] in ("same", "update"), steps[urn(NEW_TYPE, name)]
    assert steps[urn("pulumi:providers:gcp-training-jobs", "stack")]["op"] == "create"

    project.up()
    assert writes_since(emulator, since) == []  # nothing made, replaced or cancelled: reads only
    after = {r["urn"].rsplit("::", 1)[1]: r for r in project.resources()}
    assert set(after) == set(before)
    for name, entry in after.items():
        old = before[name]
        assert entry["type"] == NEW_TYPE and entry["urn"] == urn(NEW_TYPE, name)
        assert entry["provider"].startswith(urn("pulumi:providers:gcp-training-jobs", "stack") + "::")
        assert entry["id"] == old["id"] and entry["outputs"]["jobId"] == old["outputs"]["jobId"]
        identity = f"organization/gcp-training-jobs/{STACK}/{name}"  # the package's, from the URN: the same
        assert entry["inputs"]["identity"] == old["inputs"]["identity"] == identity
        assert "__provider" not in entry["inputs"] and "__provider" not in entry["outputs"]
    assert {job["labels"]["pulumi-job"]: job for job in emulator.jobs().values()} == live
    assert {name: job["jobId"] for name, job in project.outputs()["jobs"].items()} == \
        {name: entry["outputs"]["jobId"] for name, entry in before.items()}
    project.pulumi("preview", "--expect-no-changes")  # fails (exit 255) on any change
    assert writes_since(emulator, since) == []

    # and back (`jobResource: dynamic`): the same jobs again, the dynamic resource's by its alias to the package's type
    project.edit_config(lambda config: config.update({"gcp-training-jobs:jobResource": "dynamic"}))
    preview = json.loads(project.pulumi("preview", "--json", "--show-sames").stdout)
    ops = {step["urn"]: step["op"] for step in preview["steps"]}
    assert {ops[urn(OLD_TYPE, name)] for name in before} <= {"same", "update"}, ops
    assert ops[urn("pulumi:providers:gcp-training-jobs", "stack")] == "delete", ops
    project.up()
    assert writes_since(emulator, since) == []
    assert {r["urn"]: r["id"] for r in project.resources()} == {urn(OLD_TYPE, n): e["id"] for n, e in before.items()}
    project.pulumi("preview", "--expect-no-changes")

    project.pulumi("destroy", "--yes", "--skip-preview")
    assert sorted(writes_since(emulator, since)) == ["customJobs.cancel", "customJobs.cancel"]
    assert {job["state"] for job in emulator.jobs().values()} == {CANCELLED["vertex"]}


def test_the_stacks_plan_is_the_packages_and_a_credential_is_secret_where_it_stands(
        tmp_path: Path, emulator: Emulator) -> None:
    """Two jobs of one L4 each against a limit of 1: each fits alone, not together. The package's check places them
    as the stack's plan does (the stack's earlier new jobs counted, the failure named by the stack's key); with the
    limit raised, `up` makes each once, the token a job's args take from the stack's encrypted config secret at its
    own path in the job's state, and in the provider's (the stack's config: that key secret as a whole)."""
    emulator.control("reset", {})
    emulator.control("quotas", {"metric": L4, "region": "us-central1", "limit": 1})
    project = project_of(tmp_path, emulator, {"a": {"jobSpec": l4_spec()}, "b": {"jobSpec": l4_spec("unset")}},
                         named=True, jobResource="package")
    project.pulumi("config", "set", "--secret", "--path",
                   "gcp-training-jobs:jobs.b.jobSpec.workerPoolSpecs[0].containerSpec.args[0]", TOKEN)
    preview = project.pulumi("preview", ok=False)
    text = preview.stdout + preview.stderr
    assert preview.returncode != 0, text
    assert "b needs 1, the stack's earlier new jobs there take 1" in text, text  # the stack's plan, not b alone
    assert "gcp-training-jobs:jobs.b" in text, text  # named by the stack's key
    assert TOKEN not in text
    emulator.control("quotas", {"metric": L4, "region": "us-central1", "limit": 2})
    project.up()
    assert sorted(job["labels"]["pulumi-job"].split("_")[0] for job in emulator.jobs().values()) == ["a", "b"]
    (b,) = [r for r in project.resources(NEW_TYPE) if r["urn"].endswith("::b")]
    state = project.state()
    assert TOKEN not in state
    args = b["inputs"]["job"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
    assert isinstance(args[0], dict) and "ciphertext" in args[0], args  # secret where it stands
    assert b["inputs"]["job"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] == "g2-standard-8"


CONSUMER = '''"""A team's own Python program: one job as the provider package's resource, no pickle in its state."""
import pulumi

from gcp_training_jobs import PackageTrainingJob, TrainingJobArgs

job = PackageTrainingJob("train", TrainingJobArgs(project="pkg-project", job=JOB))
pulumi.export("state", job.state)
pulumi.export("jobId", job.jobId)
'''


def test_a_python_program_declares_the_packages_resource_with_trainingjobs_arguments(
        tmp_path: Path, emulator: Emulator) -> None:
    """`PackageTrainingJob` takes TrainingJob's arguments in a team's own program (no stack file): the engine runs
    the package's plugin, the job is made once, typed outputs come back, and a destroy cancels it."""
    emulator.control("reset", {})
    program = CONSUMER.replace("JOB", repr({"region": "us-central1", "jobSpec": l4_spec("--epochs=1")}))
    project = Project.consumer(tmp_path, PULUMI, emulator, "team-python", program)
    project.env["PATH"] = f"{PLUGIN}:{project.env['PATH']}"
    project.up()
    assert len(emulator.calls("customJobs.create")) == 1
    outputs = project.outputs()
    assert outputs["state"] == "QUEUED" and outputs["jobId"].startswith("train_")
    (entry,) = project.resources(NEW_TYPE)
    assert entry["inputs"]["identity"] == "organization/team-python/dev/train"
    assert "__provider" not in entry["outputs"]
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert len(emulator.calls("customJobs.cancel")) == 1


def test_the_packages_lines_reach_the_engine_under_their_resource(tmp_path: Path, emulator: Emulator) -> None:
    """A line the provider says outside `check` (its diff's warning before a running job is replaced) is sent to the
    engine's Log service under the job's resource: a plugin's stderr is the engine's own log, not the user's. And a
    credential a stack allows in plain text goes to the stack's provider secret (its key's whole text)."""
    emulator.control("reset", {})
    project = project_of(tmp_path, emulator, {"l4": {"jobSpec": l4_spec(f"--token={TOKEN}")}},
                         jobResource="package", plaintextCredentials="allow")
    project.up()
    (resource,) = project.resources(NEW_TYPE)
    project.edit_job("l4", lambda job: job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"].update(
        machineType="g2-standard-24", acceleratorCount=2))
    preview = project.pulumi("preview", "--diff")
    text = preview.stdout + preview.stderr
    assert f"replacing job l4 (QUEUED since {resource['outputs']['createTime']}): the running job will be " \
        "cancelled" in text, text
    assert TOKEN not in text
    (provider,) = [r for r in project.deployment()["resources"] if r["type"] == "pulumi:providers:gcp-training-jobs"]
    jobs = provider["inputs"]["stackConfig"]["gcp-training-jobs:jobs"]
    assert isinstance(jobs, dict) and "ciphertext" in jobs, jobs  # the key holding the credential: secret
    assert provider["inputs"]["stackConfig"]["gcp:project"] == "pkg-project"  # the others readable
    assert TOKEN not in project.state()  # nowhere in plain text: the job's input and outputs hold it secret too


def test_the_wheels_plugin_installed_with_pulumi_plugin_install_serves_the_stack(tmp_path: Path,
                                                                                emulator: Emulator) -> None:
    """A team without a checkout: `pulumi plugin install resource gcp-training-jobs VERSION --file` of the wheel's
    console script (its virtualenv's Python) puts the plugin where the engine looks first (PULUMI_HOME's plugins):
    no PATH, no `plugins:` in Pulumi.yaml, and the stack's jobs are the package's."""
    emulator.control("reset", {})
    (tmp_path / "wheel").mkdir()
    python, _ = install_wheel(tmp_path / "wheel")
    project = Project.copy(tmp_path, PULUMI, emulator, stack=STACK,
                           config=offline_config("pkg", {"one": {"jobSpec": l4_spec()}}, jobResource="package"))
    installed = subprocess.run([PULUMI, "plugin", "install", "resource", "gcp-training-jobs", __version__, "--file",
                                str(python.parent / "pulumi-resource-gcp-training-jobs")],
                               cwd=project.path, env=project.env, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    assert str(PLUGIN) not in project.env["PATH"]
    project.up()
    assert len(emulator.calls("customJobs.create")) == 1
    (entry,) = project.resources(NEW_TYPE)
    assert entry["provider"].startswith(urn("pulumi:providers:gcp-training-jobs", "stack") + "::")
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert len(emulator.calls("customJobs.cancel")) == 1
