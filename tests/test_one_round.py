"""One round: `validate` of a stack file and `plan` say a spec mistake in one job, a guardrail break in another and
the plaintext credentials of the stack together, each once, exit 1; the job with the mistake is not guardrailed (it
has no facts); a stack with one kind of problem says what it said before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gcp_training_jobs.resources.settings import load_stack_file
from gcp_training_jobs.resources.settings.guardrails import one_round
from gcp_training_jobs.resources.settings.judge import StackSpecError
from tests.helpers import CREDENTIAL_SAMPLES

ROOT = Path(__file__).resolve().parents[1]
TOKEN = CREDENTIAL_SAMPLES["github-pat"]
#: 16 NVIDIA_TESLA_T4 at once: over maxAcceleratorsPerJob 8.
BIG = """\
    big:
      trainingInput:
        scaleTier: CUSTOM
        masterType: n1-standard-16
        masterConfig:
          acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 4}
          imageUri: us-docker.pkg.dev/my-ml-test/trainers/trainer:1
          containerArgs: [ARGS]
        workerType: n1-standard-16
        workerCount: 3
        workerConfig:
          acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 4}
"""
#: A machine type Vertex AI has not, and 16 accelerators too: it is not guardrailed (it did not judge).
BROKEN = (BIG.replace("big:", "broken:").replace("masterType: n1-standard-16", "masterType: n1-standard-99")
          .replace("ARGS", "--epochs=5"))

MISTAKE = ("gcp-training-jobs:jobs.broken.trainingInput.masterType: 'n1-standard-99' is not a machine type of "
           "Vertex AI training (did you mean n1-standard-96?); allowed: n1-standard-4, n1-standard-8, n1-standard-16, "
           "n1-standard-32, n1-standard-64, n1-standard-96")
BREAK = ("gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job big holds 16 accelerators at once (4 NVIDIA_TESLA_T4 "
         "x 1 replica + 4 NVIDIA_TESLA_T4 x 3 replicas); allowed: at most 8")
REFUSAL = "gcp-training-jobs:jobs.big.trainingInput.masterConfig.containerArgs[0]: holds what looks like a GitHub"


def stack(tmp_path: Path, *jobs: str, args: str = "--epochs=5", extra: str = "",
          guardrails: str = "maxAcceleratorsPerJob: 8") -> Path:
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text("config:\n  gcp:project: my-ml-test\n  gcp:region: us-central1\n"
                    f"  gcp-training-jobs:labels: {{env: qa}}\n{extra}"
                    f"  gcp-training-jobs:guardrails: {{{guardrails}}}\n  gcp-training-jobs:jobs:\n"
                    + "".join(jobs).replace("ARGS", args))
    return path


def run(*argv: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env["GCP_TRAINING_JOBS_BUILD_DIR"] = str(tmp_path / "build")
    return subprocess.run([sys.executable, "-m", "components", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def commands(path: Path) -> list[tuple[str, ...]]:
    plan = ("plan", "--stack", "qa", "--stacks-dir", str(path.parent))
    return [("validate", str(path)), plan, (*plan, "--json")]


def test_the_stack_keeps_the_jobs_that_judged_and_one_round_holds_them_to_the_guardrails(tmp_path: Path) -> None:
    path = stack(tmp_path, BROKEN, BIG)
    with pytest.raises(StackSpecError) as caught:
        load_stack_file(path)
    assert caught.value.judged is not None and list(caught.value.judged.jobs) == ["big"]
    problems, warnings = one_round(caught.value, str(path))
    assert [str(p) for p in problems] == [f"{path}: {MISTAKE}", f"{path}: {BREAK}"]
    assert warnings == ()
    no_guardrails = stack(tmp_path, BROKEN, BIG, guardrails="maxAcceleratorsPerJob: many")  # the stack's keys broken
    with pytest.raises(StackSpecError) as caught:
        load_stack_file(no_guardrails)
    assert caught.value.judged is None
    assert one_round(caught.value, str(no_guardrails)) == (list(caught.value.problems), ())


@pytest.mark.slow
def test_validate_and_plan_say_the_mistake_the_guardrail_break_and_the_credential_at_once(tmp_path: Path) -> None:
    path = stack(tmp_path, BROKEN, BIG, args=TOKEN)
    for argv in commands(path):
        result = run(*argv, tmp_path=tmp_path)
        assert result.returncode == 1, (argv, result.stdout, result.stderr)
        lines = result.stdout.splitlines()
        assert len(lines) == 3 and lines[0].startswith(f"{path}: {REFUSAL}"), (argv, lines)
        assert lines[1:] == [f"{path}: {MISTAKE}", f"{path}: {BREAK}"], argv
        assert TOKEN not in result.stdout + result.stderr and "warning" not in result.stderr, argv  # refused, once


@pytest.mark.slow
def test_a_credential_allowed_in_plain_text_is_warned_of_beside_the_mistake_and_the_break(tmp_path: Path) -> None:
    path = stack(tmp_path, BROKEN, BIG, args=TOKEN, extra="  gcp-training-jobs:plaintextCredentials: allow\n")
    for argv in commands(path)[:2]:
        result = run(*argv, tmp_path=tmp_path)
        assert result.returncode == 1 and result.stdout.splitlines() == [f"{path}: {MISTAKE}", f"{path}: {BREAK}"]
        (warning,) = result.stderr.splitlines()
        assert warning.startswith(f"{path}: warning: gcp-training-jobs:jobs.big.trainingInput.masterConfig."
                                  "containerArgs[0]: holds what looks like a GitHub personal access token"), warning
        assert TOKEN not in result.stdout + result.stderr


@pytest.mark.slow
def test_a_stack_with_one_kind_of_problem_says_what_it_said(tmp_path: Path) -> None:
    """A mistake with every judged job in its guardrails: the mistake alone; a break alone: plan's verdict."""
    path = stack(tmp_path, BROKEN, BIG, guardrails="maxAcceleratorsPerJob: 16")
    for argv in commands(path):
        result = run(*argv, tmp_path=tmp_path)
        assert result.returncode == 1 and result.stdout.splitlines() == [f"{path}: {MISTAKE}"], argv
    path = stack(tmp_path, BIG)
    result = run("validate", str(path), tmp_path=tmp_path)
    assert result.returncode == 1 and result.stdout.splitlines() == [f"{path}: {BREAK}"]
