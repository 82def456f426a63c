"""The library installs as a package and works from a program outside this repository.

A wheel is built from the repository, installed into a fresh virtualenv (its dependencies are the test
venv's, reached through a .pth file, so nothing is downloaded), and examples/consumer_program.py is run
from a temporary folder under Pulumi's mocks: the components it imports come from the installed wheel.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.resources.job_model.identity import stack_label, stack_label_of
from tests.helpers import commit_all, git, install_wheel, run_ok

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return install_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.mark.slow
def test_wheel_installs_and_a_consumer_program_uses_the_components(tmp_path: Path,
                                                                  installed: tuple[Path, Path]) -> None:
    python, site = installed
    outside = tmp_path / "consumer"
    outside.mkdir()
    program = outside / "__main__.py"
    program.write_text((ROOT / "examples" / "consumer_program.py").read_text())
    where = run_ok(python, "-c", "import gcp_training_jobs; print(gcp_training_jobs.__file__)", cwd=outside)
    assert Path(where.strip()).is_relative_to(site), f"gcp_training_jobs imported from {where}, not the wheel"
    assert not list(site.glob("components*")), "the wheel installs nothing named components"

    registered = json.loads(run_ok(python, program, cwd=outside).strip().splitlines()[-1])
    types = [r["type"] for r in registered]
    assert "gcp-training:index:TrainingBuckets" in types
    assert types.count("gcp:storage/bucket:Bucket") == 2
    assert any(t.endswith("TrainingJob") for t in types), types


@pytest.mark.slow
def test_the_installed_package_plans_a_project_folder_of_its_own(tmp_path: Path,
                                                                 installed: tuple[Path, Path]) -> None:
    """`pip install .`, then `python -m gcp_training_jobs plan --stack dev` (and the `gcp-training-jobs` command) in
    a new folder that holds a team's project (Pulumi.yaml, the program, its stacks and trainers) and a `components/`
    package of the team's own, as Kubeflow Pipelines repositories often have: the library's name is its own."""
    python, site = installed
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy2(ROOT / name, project / name)
    for folder in ("stacks", "trainers"):
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "components").mkdir()  # the team's own package, beside the program
    (project / "components" / "__init__.py").write_text('"""The team\'s pipeline components."""\nTEAM = "vision"\n')
    where = run_ok(python, "-c", "import gcp_training_jobs, components; print(gcp_training_jobs.__file__, "
                   "components.TEAM)", cwd=project)
    assert Path(where.split()[0]).is_relative_to(site), f"gcp_training_jobs imported from {where}, not the wheel"
    assert where.split()[1] == "vision", "the team's own components package is the one imported"

    shown = run_ok(python, "-m", "gcp_training_jobs", "plan", "--stack", "dev", cwd=project)
    assert "Plan for stack dev (stacks/Pulumi.dev.yaml)" in shown and "TrainingJob" in shown, shown
    command = python.parent / "gcp-training-jobs"
    assert run_ok(command, "plan", "--stack", "dev", cwd=project) == shown

    # the program imports the team's own package, as Pulumi's language host runs it (its folder first on the path)
    (project / "teamlib").mkdir()
    (project / "teamlib" / "__init__.py").write_text('"""The team\'s helpers."""\nSTACK_NOTE = "teamlib loaded"\n')
    program = project / "__main__.py"
    program.write_text("import teamlib  # the team's own package, beside the program\n"
                       "assert teamlib.STACK_NOTE == 'teamlib loaded'\n" + program.read_text())
    assert run_ok(command, "plan", "--stack", "dev", cwd=project) == shown


#: A team's program: it imports its own package `acme_ml` from the project folder, which names a data bucket the
#: program registers beside the library's resources (each side of a diff registers its own acme_ml's bucket).
TEAM_PROGRAM = '''"""The acme team's training infrastructure."""
from pathlib import Path

import pulumi_gcp as gcp

import acme_ml
from gcp_training_jobs.resources.settings import from_pulumi_config
from gcp_training_jobs.resources.stack import build_stack

settings = from_pulumi_config(root=Path(__file__).resolve().parent)
gcp.storage.Bucket(acme_ml.DATA_BUCKET, name=acme_ml.DATA_BUCKET, location="US", project=settings.project,
                   uniform_bucket_level_access=True, public_access_prevention="enforced")
build_stack(settings)
'''

TEAM_STACK = """config:
  gcp:project: acme-ml-dev
  gcp:region: us-central1
  gcp-training-jobs:budget: {billingAccount: 012345-6789AB-CDEF01, monthlyUsd: 2000}
  gcp-training-jobs:jobs:
    l4:
      jobSpec:
        workerPoolSpecs:
          - machineSpec: {machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}
            replicaCount: 1
            containerSpec: {imageUri: us-central1-docker.pkg.dev/acme-ml-dev/trainers/t:0.1, args: [--epochs=EPOCHS]}
        scheduling: {timeout: 7200s}
"""


def team_project(where: Path) -> Path:
    """A team's project in a git repository of its own, the project in a folder of it (`infra/`): Pulumi.yaml named
    `acme-training`, the program importing `acme_ml` from beside it, a `dev` stack; committed on `main`."""
    project = where / "repo" / "infra"
    (project / "stacks").mkdir(parents=True)
    (project / "acme_ml").mkdir()
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text().replace(
        "name: gcp-training-jobs", "name: acme-training", 1))
    (project / "__main__.py").write_text(TEAM_PROGRAM)
    (project / "acme_ml" / "__init__.py").write_text('"""The acme team\'s own code."""\nfrom acme_ml.data import '
                                                     'DATA_BUCKET\n')
    (project / "acme_ml" / "data.py").write_text('DATA_BUCKET = "acme-data-v1"\n')
    (project / "stacks" / "Pulumi.dev.yaml").write_text(TEAM_STACK.replace("EPOCHS", "5"))
    git(project.parent, "init", "-q", "-b", "main")
    commit_all(project.parent, "base")
    return project


@pytest.mark.slow
def test_the_installed_command_diffs_and_plans_a_team_project_that_imports_its_own_package(
        tmp_path: Path, installed: tuple[Path, Path]) -> None:
    """`gcp-training-jobs diff --base main` (the installed command) in a team's project whose program imports its own
    package from the project folder: each side runs with that side's package (the base read from git's objects, the
    head from the working tree or a second ref), and `plan` gives the budget the stack label `up` gives the jobs (the
    project's name, from Pulumi.yaml)."""
    python, _ = installed
    command = python.parent / "gcp-training-jobs"
    project = team_project(tmp_path)
    (project / "acme_ml" / "data.py").write_text('DATA_BUCKET = "acme-data-v2"\n')  # the team's code alone changed
    untracked = project / "venv"  # a virtualenv in the project folder (untracked) is no input of the plan
    untracked.mkdir()
    (untracked / "pyvenv.cfg").write_text("home = /usr/bin\n")

    found = json.loads(run_ok(command, "diff", "--base", "main", "--json", cwd=project))
    stack = found["stacks"]["dev"]
    assert stack["sameInputs"] is False, "the team's code changed: both sides run"
    assert stack["resources"]["removed"] == ["Bucket acme-data-v1"], stack["resources"]
    assert stack["resources"]["added"] == ["Bucket acme-data-v2"], stack["resources"]
    assert stack["jobs"]["l4"]["change"] == "unchanged"

    (project / "stacks" / "Pulumi.dev.yaml").write_text(TEAM_STACK.replace("EPOCHS", "10"))
    git(project.parent, "checkout", "-q", "-b", "change")
    commit_all(project.parent, "the team's change")
    git(project.parent, "checkout", "-q", "main")  # both sides from refs, the working tree at the base
    text = run_ok(command, "diff", "--base", "main", "--head", "change", cwd=project)
    assert "args --epochs=5 -> --epochs=10" in text and "the program failed" not in text, text
    unchanged = json.loads(run_ok(command, "diff", "--base", "main", "--json", cwd=project))
    assert unchanged["stacks"]["dev"]["change"] == "unchanged" and unchanged["stacks"]["dev"]["sameInputs"], \
        "the untracked virtualenv and the program's caches are no change"

    plan = json.loads(run_ok(command, "plan", "--stack", "dev", "--json", cwd=project))
    resources = {node["name"]: node for node in _walk(plan["resources"])}
    assert "acme-data-v1" in resources
    label = resources["budget"]["inputs"]["budgetFilter"]["labels"]
    identity = next(n for n in resources.values() if n["type"].endswith("TrainingJob"))["inputs"]["identity"]
    assert label == stack_label_of(identity) == stack_label("acme-training", "dev"), (label, identity)


def _walk(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        yield from _walk(node.get("children", []))


@pytest.mark.slow
def test_the_wheel_ships_its_types_and_mypy_checks_a_consumer_against_them(tmp_path: Path,
                                                                          installed: tuple[Path, Path]) -> None:
    """PEP 561: `py.typed` in the wheel, so mypy reads the library's hints in a consumer's program (no "missing
    library stubs or py.typed marker"), and a wrong argument is a type error there, before any run."""
    python, site = installed
    assert (site / "gcp_training_jobs" / "py.typed").is_file()
    outside = tmp_path / "consumer"
    outside.mkdir()
    (outside / "good.py").write_text((ROOT / "examples" / "consumer_program.py").read_text())
    (outside / "bad.py").write_text("from gcp_training_jobs import TrainingJobArgs\n\n"
                                    "TrainingJobArgs(project='p', job={}, retries='three')\n")
    mypy = [sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
            "--ignore-missing-imports", "--follow-imports=silent"]
    good = subprocess.run([*mypy, "good.py"], cwd=outside, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([*mypy, "bad.py"], cwd=outside, capture_output=True, text=True, timeout=300)
    # The checker's own wording is its own: the error is on the line that passes `retries`, and names it.
    assert bad.returncode == 1 and "bad.py:3" in bad.stdout and "retries" in bad.stdout, bad.stdout + bad.stderr
