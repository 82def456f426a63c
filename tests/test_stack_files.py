"""One stack-file finder (settings.stack_file) for the plan, the settings read inside a program and the policy
pack: it looks where Pulumi looks, in the folder Pulumi.yaml names in `stackConfigDir`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gcp_training_jobs.jobspec.core.errors import UnreadableError
from gcp_training_jobs.resources.settings.pulumi_config import _stack_file
from gcp_training_jobs.resources.settings.stack_file import stack_file, stack_names, stacks_folder
from policies.pack import stack_guardrails

ROOT = Path(__file__).resolve().parent.parent


def project(tmp_path: Path, stack_config_dir: str | None) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n" +
                                          (f"stackConfigDir: {stack_config_dir}\n" if stack_config_dir else ""))
    folder = tmp_path / (stack_config_dir or ".")
    folder.mkdir(exist_ok=True)
    (folder / "Pulumi.qa.yaml").write_text("config:\n  gcp-training-jobs:guardrails:\n    maxAcceleratorsPerJob: 3\n")
    (folder / "Pulumi.ci.yml").write_text("config: {}\n")
    return folder


@pytest.mark.parametrize("config_dir", ["envs", None])
def test_the_finder_looks_where_pulumi_yaml_says(tmp_path: Path, config_dir: str | None) -> None:
    folder = project(tmp_path, config_dir)
    assert stacks_folder(tmp_path) == folder
    assert stack_file(folder, "qa") == folder / "Pulumi.qa.yaml"
    assert stack_file(folder, "ci") == folder / "Pulumi.ci.yml"
    assert stack_file(folder, "prod") is None
    assert stack_names(folder) == ["ci", "qa"]
    # The settings' messages and the policy pack use the same finder.
    assert _stack_file(tmp_path, "qa") == str((folder / "Pulumi.qa.yaml").relative_to(tmp_path))
    stack_guardrails.cache_clear()
    rails, problems = stack_guardrails("qa", str(tmp_path))
    assert problems == () and rails.max_accelerators_per_job == 3


def test_an_unreadable_pulumi_yaml_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: [unclosed\n")
    with pytest.raises(UnreadableError, match="Pulumi.yaml"):
        stacks_folder(tmp_path)


@pytest.mark.slow
def test_plan_finds_stacks_in_the_project_s_stack_config_dir(tmp_path: Path) -> None:
    project(tmp_path, "envs")
    done = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "nope"], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "envs/Pulumi.nope.yaml: no such stack file; available stacks in envs: ci, qa"
