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
from pathlib import Path

import pytest

from tests.helpers import install_wheel, run_ok

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
