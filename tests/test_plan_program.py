"""The program `plan` runs, as a team writes it: its own error said in one line (exit 1, no traceback), an error
raised in this library's code said as a bug (the traceback, exit 3), and the program run as Pulumi's language
host runs it, its project folder first on the path, so that it imports the team's own packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gcp_training_jobs.cli.main import EXIT_INTERNAL
from gcp_training_jobs.jobspec.catalog.prices import PRICES_FILE_ENV
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_OK

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each runs the command in a process of its own

#: The repository's own program, read as a team's program reads the library: imported, then built.
PROGRAM = (ROOT / "__main__.py").read_text(encoding="utf-8")


def team_project(tmp: Path, main: str, package: dict[str, str] | None = None) -> Path:
    """`tmp/team`: a Pulumi project of the repository's Pulumi.yaml and `local` stack, `main` as its __main__.py,
    and `package`'s files (path -> text) beside it."""
    project = tmp / "team"
    (project / "stacks").mkdir(parents=True)
    shutil.copy2(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy2(ROOT / "stacks" / "Pulumi.local.yaml", project / "stacks" / "Pulumi.local.yaml")
    (project / "__main__.py").write_text(main, encoding="utf-8")
    for name, text in (package or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    return project


def plan(project: Path, tmp: Path, *prefix: str, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`python -m components plan --stack local` run from a folder outside the project (its stacks folder named),
    offline: the bundled price table, no proxy reachable. `prefix`: a script run first (python -c); `flags`: plan's."""
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env.update({"PYTHONPATH": str(ROOT), PRICES_FILE_ENV: str(tmp / "no-refreshed-prices.json"),
                "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"})
    command = [*prefix] or ["-m", "components"]
    return subprocess.run([sys.executable, *command, "plan", "--stack", "local", "--stacks-dir",
                           str(project / "stacks"), *flags], cwd=elsewhere, capture_output=True, text=True, timeout=120,
                          env=env)


def test_a_program_s_own_error_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    project = team_project(tmp_path, PROGRAM.replace("build_stack(settings)",
                                                     "raise ValueError('the team says no')"))
    done = plan(project, tmp_path)
    assert done.returncode == EXIT_INVALID, done.stderr
    assert done.stderr.strip() == f"{project / 'stacks' / 'Pulumi.local.yaml'}: the program failed: the team says no"


def test_an_error_raised_in_the_library_s_code_is_a_bug_with_its_traceback_and_exit_3(tmp_path: Path) -> None:
    """A KeyError raised in build_stack (a lookup made to fail in the library's own frame) is not the program's
    failure: the traceback, one line asking for a report, exit 3 (never 1, which reads as invalid input)."""
    project = team_project(tmp_path, PROGRAM)
    script = ("import sys\n"
              "import gcp_training_jobs.resources.stack as stack\n"
              "stack._label_value = {}.__getitem__\n"  # build_stack's own lookup of the stack's label fails
              "from gcp_training_jobs.cli.main import entry\n"
              "sys.argv = ['components', *sys.argv[1:]]\n"
              "entry()\n")
    done = plan(project, tmp_path, "-c", script)
    assert done.returncode == EXIT_INTERNAL, done.stderr
    assert "Traceback (most recent call last)" in done.stderr and "KeyError: 'local'" in done.stderr
    assert "internal error of gcp-training-jobs" in done.stderr.splitlines()[-1]
    assert "the program failed" not in done.stderr


def test_the_program_imports_the_team_s_own_package_beside_it(tmp_path: Path) -> None:
    """A __main__.py importing `teamlib/` beside it plans from any folder, as `pulumi up` runs it."""
    main = "import teamlib\n\n" + PROGRAM.replace("build_stack(settings)", "build_stack(teamlib.tuned(settings))")
    package = {"teamlib/__init__.py": "def tuned(settings):\n    return settings\n"}
    project = team_project(tmp_path, main, package)
    done = plan(project, tmp_path)
    assert done.returncode == EXIT_OK, done.stderr
    assert "gpu-spot" in done.stdout

    project = team_project(tmp_path / "missing", main)  # no teamlib: the program's own error, in one line
    done = plan(project, tmp_path)
    assert done.returncode == EXIT_INVALID
    assert done.stderr.strip().endswith("the program failed: No module named 'teamlib'")


def test_the_path_and_the_team_s_modules_are_the_command_s_own_again_after_the_program_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While it runs, the program's folder is first on the path; after, the path is as it was and the team's
    modules are forgotten, so that the other side of a diff imports its own teamlib, not this one."""
    from gcp_training_jobs.cli.plan.mocks import run_program

    project = team_project(tmp_path, "import sys\nimport teamlib\nassert sys.path[0] == teamlib.HERE\n",
                           {"teamlib/__init__.py": "import os\nHERE = os.path.dirname(os.path.dirname(__file__))\n"})
    before = list(sys.path)
    monkeypatch.chdir(tmp_path)
    try:
        run_program("local", {}, main=project / "__main__.py")
        assert sys.path == before
        assert "teamlib" not in sys.modules
    finally:
        sys.modules.pop("teamlib", None)


def test_the_budget_s_stack_label_is_the_one_up_gives_the_jobs_under_the_project_s_own_name(tmp_path: Path) -> None:
    """The program runs under the project's name (Pulumi.yaml's `name`), as `up` runs it: the budget filters on the
    `pulumi-stack` label the stack's jobs carry, not another project's."""
    import json

    from gcp_training_jobs.resources.job_model.identity import stack_label, stack_label_of

    project = team_project(tmp_path, PROGRAM)
    pulumi_yaml = project / "Pulumi.yaml"
    pulumi_yaml.write_text(pulumi_yaml.read_text().replace("name: gcp-training-jobs", "name: acme-training", 1))
    stack_path = project / "stacks" / "Pulumi.local.yaml"
    stack_path.write_text(stack_path.read_text().replace(
        "config:\n", "config:\n  gcp-training-jobs:budget: {billingAccount: 012345-6789AB-CDEF01, monthlyUsd: 9000}\n",
        1))
    done = plan(project, tmp_path, flags=("--json",))
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    nodes, found = json.loads(done.stdout)["resources"], []
    while nodes:
        found += nodes
        nodes = [child for node in nodes for child in node.get("children", [])]
    label = next(n for n in found if n["type"] == "gcp:billing/budget:Budget")["inputs"]["budgetFilter"]["labels"]
    jobs = [n["inputs"]["identity"] for n in found if n["type"].endswith("TrainingJob")]
    assert jobs and all(stack_label_of(identity) == label for identity in jobs), (label, jobs)
    assert label == stack_label("acme-training", "local")
