"""Where the engine would find pulumi-gcp's resource plugin (resources.plugins): the version the installed pulumi_gcp
asks for, its plugin cache under PULUMI_HOME (a download left `.partial` does not count), else PATH; and the words
that say what to install, which `plan` says (text and --json) before `pulumi up` would fail on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

from gcp_training_jobs.resources.plugins import gcp_plugin
from tests.helpers import ROOT


def asked_version() -> str:
    spec = find_spec("pulumi_gcp")
    assert spec is not None and spec.submodule_search_locations
    described = Path(list(spec.submodule_search_locations)[0]) / "pulumi-plugin.json"
    return str(json.loads(described.read_text())["version"])


def test_the_plugin_is_looked_for_where_the_engine_looks(tmp_path: Path) -> None:
    home, version = tmp_path / "pulumi-home", asked_version()
    env = {"PULUMI_HOME": str(home), "PATH": str(tmp_path / "bin")}
    missing = gcp_plugin(env)
    assert (missing.name, missing.version, missing.found) == ("gcp", version, None)
    assert missing.install == f"pulumi plugin install resource gcp {version}"
    words = missing.needed("the stack's persistent resources (team-pool)")
    assert words.startswith(f"Pulumi's gcp resource plugin (pulumi-resource-gcp {version}) is not installed")
    assert words.endswith(f"install it first: pulumi plugin install resource gcp {version}")
    folder = home / "plugins" / f"resource-gcp-v{version}"
    folder.mkdir(parents=True)
    (folder / "pulumi-resource-gcp").write_text("")
    Path(f"{folder}.partial").write_text("")
    assert gcp_plugin(env).found is None  # a download that did not finish
    Path(f"{folder}.partial").unlink()
    assert gcp_plugin(env).found == str(folder)
    (folder / "pulumi-resource-gcp").unlink()
    (tmp_path / "bin").mkdir()
    binary = tmp_path / "bin" / "pulumi-resource-gcp"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert gcp_plugin(env).found == str(binary)  # an ambient plugin on PATH


STACK = """\
config:
  gcp:project: my-project-123
  gcp-training-jobs:backend: vertex
  gcp-training-jobs:region: us-central1
  gcp-training-jobs:persistentResources:
    team-pool:
      resourcePools:
        - machineSpec: {machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 2}
          replicaCount: 1
  gcp-training-jobs:jobs: {}
"""


def plan(tmp_path: Path, *extra: str, stack: str = STACK) -> subprocess.CompletedProcess[str]:
    """`plan` of a stack (default: declaring a persistent resource), the engine's plugin cache at tmp_path (empty
    unless filled) and no plugin on PATH."""
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "stacks" / "Pulumi.pr.yaml").write_text(stack)
    env = {**os.environ, "PULUMI_HOME": str(tmp_path / "pulumi-home"), "PATH": str(tmp_path / "bin"),
           "GCP_TRAINING_JOBS_BUILD_DIR": str(tmp_path / "build")}
    return subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "pr", "--stacks-dir",
                           str(tmp_path / "stacks"), *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_plan_says_the_plugin_the_stack_needs_before_pulumi_up(tmp_path: Path) -> None:
    version = asked_version()
    words = gcp_plugin({"PULUMI_HOME": str(tmp_path / "pulumi-home"), "PATH": str(tmp_path / "bin")}).needed(
        "the stack's persistent resources (team-pool)")
    text = plan(tmp_path)
    assert text.returncode == 0, text.stdout + text.stderr
    assert f"    warning: {words}" in text.stdout.splitlines()
    assert (text.stdout + text.stderr).count("is not installed") == 1, "said once: the review, not the program too"
    as_json = plan(tmp_path, "--json")
    assert json.loads(as_json.stdout)["plugins"] == [{"name": "gcp", "version": version, "text": words,
                                                      "install": f"pulumi plugin install resource gcp {version}"}]
    assert f"warning: {words}" in as_json.stderr
    folder = tmp_path / "pulumi-home" / "plugins" / f"resource-gcp-v{version}"
    folder.mkdir(parents=True)
    (folder / "pulumi-resource-gcp").write_text("")
    installed = plan(tmp_path, "--json")
    assert "plugins" not in json.loads(installed.stdout) and "pulumi-resource-gcp" not in installed.stderr


def test_the_warning_names_every_resource_that_needs_the_plugin_the_budget_s_too(tmp_path: Path) -> None:
    """A budget is pulumi-gcp resources too (its billing Budget, the billingbudgets API; with enforce, the topic and
    the stop function): the review names them beside the persistent resources, and a stack with a budget alone."""
    budget = "  gcp-training-jobs:budget: {billingAccount: 012345-6789AB-CDEF01, monthlyUsd: 100, enforce: true}\n"
    both = plan(tmp_path, "--json", stack=STACK.replace("  gcp-training-jobs:jobs: {}\n",
                                                       budget + "  gcp-training-jobs:jobs: {}\n"))
    (found,) = json.loads(both.stdout)["plugins"]
    assert "the stack's persistent resources (team-pool) and the stack's budget (gcp-training-jobs:budget: its " \
        "billing Budget and the billingbudgets API and, with enforce, its Pub/Sub topic and its stop function" \
        in found["text"], found["text"]
    alone = "config:\n  gcp:project: my-project-123\n" + budget + "  gcp-training-jobs:jobs: {}\n"
    (found,) = json.loads(plan(tmp_path, "--json", stack=alone).stdout)["plugins"]
    assert "persistent resources" not in found["text"] and "need it" in found["text"]
    assert found["text"].split(" is not installed, and ")[1].startswith("the stack's budget (")
