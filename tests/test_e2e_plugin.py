"""The local loop with a declared persistent resource and no pulumi-gcp resource plugin: under the real Pulumi engine
(its own empty PULUMI_HOME, automatic plugin downloads off, as offline), `pulumi preview` of a stack declaring one
says first, in the project's words, which plugin to install and how (the version the installed pulumi_gcp asks
for), before the engine's own "no resource plugin 'pulumi-resource-gcp' found"; and a stack that declares none needs
no plugin and says nothing of it.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

from typing import Any

import pytest

from gcp_training_jobs.resources.plugins import gcp_plugin
from tests.e2e_support import LOCAL_BUCKETS, Emulator, Project, offline_config, process_emulator, require_pulumi  # noqa: F401 (the emulator fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
T4 = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 2}
IMAGE = "us-docker.pkg.dev/local-project/trainers/example:0.1"
JOB = {"jobSpec": {"scheduling": {"timeout": "3600s"}, "workerPoolSpecs": [
    {"machineSpec": T4, "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}]}}


def config(**keys: Any) -> dict[str, Any]:
    return offline_config("local", {"train": JOB}, buckets=LOCAL_BUCKETS, tpuAccess={"grant": False}, **keys)


def test_a_declared_resource_without_the_plugin_says_what_to_install(tmp_path: Any, emulator: Emulator) -> None:
    pool = {"resourcePools": [{"machineSpec": T4, "replicaCount": 1}]}
    project = Project.copy(tmp_path, PULUMI, emulator, stack="plugin", config=config(persistentResources={
        "team-pool": pool}))
    done = project.pulumi("preview", ok=False)
    told = done.stdout + done.stderr
    plugin = gcp_plugin({"PULUMI_HOME": project.env["PULUMI_HOME"], "PATH": project.env["PATH"]})
    assert plugin.found is None and plugin.version
    ours = f"pulumi plugin install resource gcp {plugin.version}"
    assert done.returncode != 0 and ours in told, told
    assert "the stack's persistent resources (team-pool) need it" in told
    engine = told.find("error: no resource plugin 'pulumi-resource-gcp' found in the workspace")  # the engine's own
    assert engine == -1 or told.find(ours) < engine, "the project's words come first"


def test_a_stack_without_one_needs_no_plugin(tmp_path: Any, emulator: Emulator) -> None:
    project = Project.copy(tmp_path, PULUMI, emulator, stack="noplugin", config=config())
    done = project.pulumi("preview")
    assert "resource plugin" not in done.stdout + done.stderr
