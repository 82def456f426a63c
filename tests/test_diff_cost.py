"""The diff's cost follows the change: a stack whose files are the same on both sides (its stack file, the program,
Pulumi.yaml and the team's code beside it, the trainers it names) is judged once and its program not run; the changed
stack is said as it is said alone, the others in one line; a change to the program, to the team's code or to
Pulumi.yaml plans every stack, as before. A scratch git repository of four stacks, one changed in the working tree."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.diff import sides
from gcp_training_jobs.cli.diff.command import diff
from gcp_training_jobs.cli.diff.text import render_markdown, render_text
from tests.helpers import commit_all, offline_review, scratch_project

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "us-central1-docker.pkg.dev/my-proj/trainers/t"
STACKS = ("s0", "s1", "s2", "s3")


def job(epochs: int) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": f"{IMAGE}:1", "args": [f"--epochs={epochs}"]}}],
        "scheduling": {"strategy": "SPOT", "timeout": "3600s"}}}


def stack(epochs: int = 5) -> str:
    return json.dumps({"config": {
        "gcp:project": "my-proj", "gcp:region": "us-central1",
        "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
        "gcp-training-jobs:jobs": {"train": job(epochs), "eval": job(1), "sweep": job(2)}}})


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Four stacks committed; s0's train job then goes from 5 epochs to 10 in the working tree."""
    found = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    for name in STACKS:
        (found / f"stacks/Pulumi.{name}.yaml").write_text(stack())
    commit_all(found, "base")
    (found / "stacks/Pulumi.s0.yaml").write_text(stack(10))
    monkeypatch.chdir(found)
    yield found


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stacks whose program `diff` runs, one entry per side planned."""
    ran: list[str] = []
    planned = sides.plan_stack

    def counted(name: str, path: Path, root: Path) -> Any:
        ran.append(name)
        return planned(name, path, root)

    monkeypatch.setattr(sides, "plan_stack", counted)
    return ran


def _diff(stacks: list[str] | None = None) -> dict[str, Any]:
    found = diff("main", None, stacks)
    assert isinstance(found, dict), found
    return found


def test_only_the_changed_stack_is_planned_and_says_what_it_says_alone(repo: Path, runs: list[str]) -> None:
    document = _diff()
    assert runs == ["s0", "s0"], "the changed stack on each side; the others judged once, their program not run"
    assert {name: (s["change"], s["sameInputs"]) for name, s in document["stacks"].items()} == {
        "s0": ("changed", False), "s1": ("unchanged", True), "s2": ("unchanged", True), "s3": ("unchanged", True)}
    alone = _diff(["s0"])
    assert document["stacks"]["s0"] == alone["stacks"]["s0"], "the changed stack as the diff of it alone says it"
    assert alone["stacks"]["s0"]["jobs"]["train"]["changes"] == ["args --epochs=5 -> --epochs=10"]
    for name in ("s1", "s2", "s3"):  # its figures are its plan's, the same on both sides
        unchanged = document["stacks"][name]
        assert unchanged["before"] == unchanged["after"] == document["stacks"]["s0"]["before"]
        assert unchanged["deltaUsdPerHour"] == 0 and unchanged["guardrails"]["broken"] == []
    every = document["allStacks"]
    assert every["after"]["usdPerHour"] == pytest.approx(4 * document["stacks"]["s1"]["after"]["usdPerHour"])
    text, markdown = render_text(document), render_markdown(document)
    assert "\n3 stacks unchanged: s1, s2, s3\n" in text and "stack s1" not in text
    assert "\n3 stacks unchanged: s1, s2, s3.\n" in markdown
    assert "--epochs=5 -> --epochs=10" in text and "--epochs=5 -> --epochs=10" in markdown


def test_nothing_changed_plans_nothing(repo: Path, runs: list[str]) -> None:
    (repo / "stacks/Pulumi.s0.yaml").write_text(stack())
    document = _diff()
    assert runs == [] and all(s["change"] == "unchanged" and s["sameInputs"] for s in document["stacks"].values())
    assert "4 stacks unchanged: s0, s1, s2, s3" in render_text(document)


@pytest.mark.parametrize("changed", ["__main__.py", "Pulumi.yaml"])
def test_a_change_to_the_program_or_the_project_plans_every_stack(repo: Path, runs: list[str], changed: str) -> None:
    path = repo / changed
    path.write_text(path.read_text() + "\n# a change beside the stacks\n")
    document = _diff()
    assert sorted(runs) == sorted(2 * list(STACKS)), "each stack on each side, as before"
    assert not any(s["sameInputs"] for s in document["stacks"].values())
    assert [name for name, s in document["stacks"].items() if s["change"] != "unchanged"] == ["s0"]


def test_a_change_to_a_trainer_plans_the_stacks_that_name_it(repo: Path, runs: list[str]) -> None:
    shutil.copytree(ROOT / "trainers/example", repo / "trainers/example",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "stacks/Pulumi.dev-ai-platform.yaml", repo / "stacks/Pulumi.s3.yaml")  # it names the trainer
    (repo / "stacks/Pulumi.s0.yaml").write_text(stack())
    commit_all(repo, "a trainer")
    task = repo / "trainers/example/trainer/task.py"
    task.write_text(task.read_text() + "\n# a change to the trainer\n")
    document = _diff()
    assert runs == ["s3", "s3"], "the stack whose trainer changed, on each side; the others judged once"
    assert document["stacks"]["s3"]["jobs"]["resnet"]["change"] == "replaced"
    assert [name for name, s in document["stacks"].items() if s["sameInputs"]] == ["s0", "s1", "s2"]


def test_a_change_to_the_team_s_code_plans_every_stack_and_caches_or_a_virtualenv_do_not(
        repo: Path, runs: list[str]) -> None:
    """The team's package beside the program is an input of every stack's plan (the program may import it); Python's
    caches, an untracked virtualenv in the project folder and a stack's trainer folder are not (the last is its
    stack's own input)."""
    (repo / "acme_ml").mkdir()
    (repo / "acme_ml" / "__init__.py").write_text("TEAM = 'acme'\n")
    (repo / "stacks/Pulumi.s0.yaml").write_text(stack())
    commit_all(repo, "the team's package")
    (repo / "acme_ml" / "__pycache__").mkdir()
    (repo / "acme_ml" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"cached")
    (repo / "venv" / "lib").mkdir(parents=True)
    (repo / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (repo / "venv" / "lib" / "site.py").write_text("# a virtualenv's file\n")
    document = _diff()
    assert runs == [] and all(s["sameInputs"] for s in document["stacks"].values())

    (repo / "acme_ml" / "__init__.py").write_text("TEAM = 'acme-vision'\n")
    _diff()
    assert sorted(runs) == sorted(2 * list(STACKS)), "each stack on each side: the program may import the package"

    runs.clear()
    (repo / "acme_ml" / "__init__.py").write_text("TEAM = 'acme'\n")
    (repo / "acme_ml" / "extra.py").write_text("EXTRA = 1\n")  # untracked, not ignored: a file the program may read
    _diff()
    assert sorted(runs) == sorted(2 * list(STACKS))
