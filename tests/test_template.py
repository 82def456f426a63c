"""The Pulumi template a team makes its own project from (templates/gcp-training-jobs/): its Pulumi.yaml asks for the
project and region, its program is the library's two calls, its requirements are the library's release and the
lock its tests ran on, its example stack is valid (judged by this repository's `validate` and planned), and
`pulumi new --generate-only` renders it under the real engine (e2e), and `pulumi new` starts a project from it before
the release is on PyPI, from a wheel built from this checkout (e2e)."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import gcp_training_jobs
from gcp_training_jobs.cli.main import main
from tests.helpers import script

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "templates" / "gcp-training-jobs"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_template_asks_for_the_project_and_region_and_keeps_stacks_in_their_folder() -> None:
    project = yaml.safe_load((TEMPLATE / "Pulumi.yaml").read_text())
    assert project["name"] == "${PROJECT}" and project["description"] == "${DESCRIPTION}"
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    assert project["stackConfigDir"] == "stacks"
    template = project["template"]
    assert template["description"].strip()
    assert set(template["config"]) == {"gcp:project", "gcp:region"}
    assert all(prompt["description"] for prompt in template["config"].values())
    assert template["config"]["gcp:region"]["default"] == "us-central1"


def test_the_program_is_the_librarys_public_calls() -> None:
    program = (TEMPLATE / "__main__.py").read_text()
    assert len([line for line in program.splitlines() if line.strip()]) == 3
    imported = [name.name for node in ast.parse(program).body if isinstance(node, ast.ImportFrom)
                and node.module == "gcp_training_jobs" for name in node.names]
    assert imported == ["build_stack", "from_pulumi_config"]
    assert all(name in gcp_training_jobs.__all__ for name in imported)


def test_the_requirements_pin_this_release_and_the_lock_its_tests_ran_on_with_every_hash() -> None:
    requirements = script("template_requirements")
    written = (TEMPLATE / "requirements.txt").read_text()
    assert written == requirements.render(requirements.recorded_hash(written)), \
        "run scripts/template_requirements.py --write"
    assert "\n--find-links wheels\n" in written  # a wheel built from a checkout, before the release is on PyPI
    found = requirements.entries(written)
    assert found[0][0] == f"gcp-training-jobs=={gcp_training_jobs.__version__}" and len(found[0][1]) == 1
    lock = (ROOT / "requirements.txt").read_text()
    assert found[1:] == requirements.entries(lock) and any(pin.startswith("pulumi==") for pin, _ in found)
    # Hash-checking mode: every requirement carries a sha256 (pip refuses the whole file otherwise).
    assert all(hashes and all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", h) for h in hashes) for _, hashes in found)
    requirement_lines = [line for line in written.splitlines() if line and not line.startswith(("#", "--", " "))]
    assert len(requirement_lines) == len(found)


def test_a_drifted_requirements_file_is_caught() -> None:
    requirements = script("template_requirements")
    written = (TEMPLATE / "requirements.txt").read_text()
    drifted = requirements.render(requirements.recorded_hash(written)).replace(
        f"gcp-training-jobs=={gcp_training_jobs.__version__}", "gcp-training-jobs==0.0.1")
    assert drifted != written
    unpinned = written.replace(f" \\\n    --hash=sha256:{requirements.recorded_hash(written)}", "", 1)
    with pytest.raises(SystemExit, match="no `gcp-training-jobs==VERSION --hash=sha256:...` line"):
        requirements.recorded_hash(unpinned)


def test_the_release_refuses_a_wheel_that_is_not_the_template_s_pin(tmp_path: Path) -> None:
    """scripts/template_requirements.py --check, the release workflow's step: 0 for the pinned bytes, 1 for others."""
    requirements = script("template_requirements")
    wheel = tmp_path / f"gcp_training_jobs-{gcp_training_jobs.__version__}-py3-none-any.whl"
    wheel.write_bytes(b"not the release's wheel")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert requirements.main(["--check", str(wheel)]) == 1
    assert "the template pins" in err.getvalue() and "--write" in err.getvalue()
    assert requirements.main(["--bogus"]) == 2


@pytest.mark.slow
def test_the_wheel_build_is_reproducible_so_a_tag_gives_the_pinned_bytes(tmp_path: Path) -> None:
    requirements = script("template_requirements")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = requirements.build_wheel(tmp_path / "a"), requirements.build_wheel(tmp_path / "b")
    assert requirements.sha256(first) == requirements.sha256(second)


def test_the_example_stack_is_valid() -> None:
    code, out, err = cli("validate", str(TEMPLATE / "stacks"))
    assert (code, err) == (0, ""), err
    assert out.strip() == f"{TEMPLATE / 'stacks' / 'Pulumi.dev.yaml'}: ok (stack)"


def test_the_example_stack_is_commented() -> None:
    text = (TEMPLATE / "stacks" / "Pulumi.dev.yaml").read_text()
    assert text.startswith("# An example stack") and text.count("#") > 20


def test_the_template_ships_the_review_and_deploy_workflows() -> None:
    for name in ("pull-request.yml", "deploy.yml"):
        text = (TEMPLATE / ".github" / "workflows" / name).read_text()
        assert "venv/bin/pip install --require-hashes -r requirements.txt" in text
        assert "pip install -r" not in text
        assert "components/" not in text and "policies/" not in text, f"{name} names this repository's folders"
    review = (TEMPLATE / ".github" / "workflows" / "pull-request.yml").read_text()
    for step in ("gcp-training-jobs validate stacks/", "gcp-training-jobs plan --stack",
                 "gcp-training-jobs diff --base", "command: preview"):
        assert step in review, step


@pytest.mark.slow
def test_the_example_stack_plans_in_a_copy_of_the_template(tmp_path: Path) -> None:
    project = tmp_path / "team-training"
    shutil.copytree(TEMPLATE, project)
    done = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "dev"], cwd=project,
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "Plan for stack dev (stacks/Pulumi.dev.yaml)" in done.stdout
    assert "TrainingJob" in done.stdout and "l4-trial" in done.stdout


@pytest.mark.e2e
def test_pulumi_new_renders_the_template(tmp_path: Path) -> None:
    from tests.e2e_support import require_pulumi

    pulumi = require_pulumi()
    target = tmp_path / "team"
    env = {**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "1", "PULUMI_HOME": str(tmp_path / "home"),
           "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}", "PULUMI_CONFIG_PASSPHRASE": "test"}
    done = subprocess.run([pulumi, "new", str(TEMPLATE), "--generate-only", "--yes", "--dir", str(target),
                           "--name", "team-training", "--description", "The team's training jobs"],
                          capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    made = yaml.safe_load((target / "Pulumi.yaml").read_text())
    assert made["name"] == "team-training" and made["description"] == "The team's training jobs"
    assert made["stackConfigDir"] == "stacks"
    for name in ("__main__.py", "requirements.txt", "stacks/Pulumi.dev.yaml", ".github/workflows/pull-request.yml",
                 ".github/workflows/deploy.yml"):
        assert (target / name).read_bytes() == (TEMPLATE / name).read_bytes(), name
    code, out, err = cli("validate", str(target / "stacks"))
    assert (code, err) == (0, ""), err


@pytest.mark.e2e
def test_pulumi_new_starts_a_project_before_the_release_is_on_pypi_from_a_wheel_built_here(tmp_path: Path) -> None:
    """docs/template.md's way, before the release reaches PyPI: the wheel built from the checkout into the new
    project's wheels/, then `pulumi new` there. The pinned `gcp-training-jobs==VERSION` is found in wheels/ (the
    requirements' `--find-links wheels`), with no index (PIP_NO_INDEX: nothing is downloaded; the project's venv is
    made beforehand with the test venv's packages, which the pins name, so only the library is installed)."""
    from tests.e2e_support import require_pulumi
    from tests.helpers import venv_beside_ours

    pulumi = require_pulumi()
    target = tmp_path / "team"
    requirements = script("template_requirements")
    (tmp_path / "build").mkdir()
    built = requirements.build_wheel(tmp_path / "build")
    (target / "wheels").mkdir(parents=True)
    wheel = Path(shutil.copy2(built, target / "wheels" / built.name))
    assert wheel.name == f"gcp_training_jobs-{gcp_training_jobs.__version__}-py3-none-any.whl"
    # The template as it stands at a release: its pin is the wheel this tree builds (here, the tree under test).
    template = tmp_path / "template"
    shutil.copytree(TEMPLATE, template)
    pinned = template / "requirements.txt"
    written = pinned.read_text()
    pinned.write_text(written.replace(requirements.recorded_hash(written), requirements.sha256(wheel)))
    # The project's venv, made beforehand where the engine's Python host installs: venv/ (Pulumi.yaml's virtualenv),
    # or the project's root under a legacy host that ignores the option (scripts/install-pulumi-engine.sh says when).
    venvs = {where: venv_beside_ours(where, with_pip=True) for where in (target / "venv", target)}
    (tmp_path / "state").mkdir()
    env = {**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "1", "PULUMI_HOME": str(tmp_path / "home"),
           "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}", "PULUMI_CONFIG_PASSPHRASE": "test",
           "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PIP_FIND_LINKS", None)  # the project's wheels/ is the only place the library can come from
    done = subprocess.run([pulumi, "new", str(template), "--yes", "--force", "--dir", str(target), "--stack", "dev",
                           "--name", "team-training", "--description", "The team's training jobs",
                           "--config", "gcp:project=team-project"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = [(python, site) for python, site in venvs.values() if (site / "gcp_training_jobs").is_dir()]
    assert len(installed) == 1, done.stdout  # the wheel, installed into the project's venv
    python, site = installed[0]
    where = subprocess.run([python, "-c", "import gcp_training_jobs; print(gcp_training_jobs.__file__)"],
                           cwd=target, capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout + where.stderr
    assert f"gcp_training_jobs-{gcp_training_jobs.__version__}.dist-info" in {p.name for p in site.iterdir()}
    checked = subprocess.run([python.parent / "gcp-training-jobs", "validate", "stacks/"], cwd=target,
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "gcp:project: team-project" in (target / "stacks" / "Pulumi.dev.yaml").read_text()

