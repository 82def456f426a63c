"""The policy pack under the real Pulumi engine: `pulumi up` / `preview --policy-pack policies/analyzer` on the
`local-ai-platform` stack (the guides' two jobs on ml v1) against the loopback emulator, with a guardrails block in
its stack file.

- a stack within its guardrails is created, with the estimated cost reported as an advisory;
- a change that breaks a guardrail fails the preview, naming the guardrail, the job and the value (the
  accelerators of a job; its worst-case cost, maxJobCostUsd);
- the pack enforces on its own: a program that registers a TrainingJob directly (no settings judge, no
  guardrails of its own) is stopped by the pack's mandatory policy.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh) and pulumi-policy in the venv
(`pip install --no-deps -r policies/requirements.txt`). Outside CI a missing one skips; under CI it fails.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import Emulator, Project, process_emulator, require_pulumi  # noqa: F401 (the emulator fixture)

pytestmark = pytest.mark.e2e

PACK = "policies/analyzer"
GUARDRAILS = {"allowedAccelerators": ["NVIDIA_TESLA_T4", "TPU_V2"], "maxAcceleratorsPerJob": 8,
              "maxAcceleratorsPerStack": 10, "requiredLabels": ["env"]}
PULUMI = require_pulumi(None if importlib.util.find_spec("pulumi_policy") is not None else
                        "pulumi-policy is not installed (pip install --no-deps -r policies/requirements.txt)")


def copy_project(base: Path, emulator: Emulator) -> Project:
    """The project with the local-ai-platform stack, pointed at the emulator, with the guardrails above."""
    project = Project.copy(base, PULUMI, emulator, stack="local-ai-platform")
    project.edit_config(lambda config: config.update({"gcp-training-jobs:guardrails": dict(GUARDRAILS)}))
    return project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
    return copy_project(tmp_path_factory.mktemp("e2e-policy"), emulator)


def jobs_of(emulator: Emulator) -> list[dict[str, Any]]:
    return list(emulator.control("jobs"))


def test_a_stack_within_its_guardrails_is_created_with_its_cost_reported(project: Project, emulator: Emulator) -> None:
    done = project.pulumi("up", "--yes", "--policy-pack", PACK, ok=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "gcp-training-jobs@v0.1.0 (local: policies/analyzer)" in out, out
    assert "[advisory]  estimated-cost" in out, out
    # n1-standard-8 + 2 T4 in us-central1, on demand (an ml v1 job, at Vertex AI's rates), no timeout: 7 days
    assert "gpu: us-central1, runs on demand: $1.24/h (on demand $1.24/h; Spot $0.65/h); worst case $208.66 " \
        "($1.24/h x 168 h; no timeout set: AI Platform Training's default, 7 days); an ml v1 job, at Vertex AI's " \
        "rates" in out, out
    assert "prices: bundled snapshot of 2026-11-23, oldest prices 2026-07-30" in out
    assert "[mandatory]" not in out
    assert {j["job"]["jobId"].split("_")[0] for j in jobs_of(emulator)} == {"gpu", "tpu"}


def test_a_change_that_breaks_a_guardrail_fails_the_preview_naming_it(project: Project, emulator: Emulator) -> None:
    before = len(jobs_of(emulator))
    project.edit_config(lambda config: config["gcp-training-jobs:guardrails"].update(maxAcceleratorsPerJob=4))
    done = project.pulumi("preview", "--diff", "--policy-pack", PACK, ok=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job tpu holds 8 accelerators at once " \
        "(8 TPU_V2 x 1 replica); allowed: at most 4" in out, out
    done = project.pulumi("up", "--yes", "--policy-pack", PACK, ok=False)
    assert done.returncode != 0
    assert len(jobs_of(emulator)) == before, "nothing is created or replaced when a guardrail breaks"


def test_a_job_whose_worst_case_is_over_max_job_cost_usd_fails_the_preview(tmp_path: Path,
                                                                         emulator: Emulator) -> None:
    """The tpu job: n1-highcpu-16 + 8 TPU_V2 cores, $5.83/h for up to 7 days (no timeout) is $978.90 at worst."""
    project = copy_project(tmp_path, emulator)
    project.edit_config(lambda config: config["gcp-training-jobs:guardrails"].update(maxJobCostUsd=500))
    done = project.pulumi("preview", "--policy-pack", PACK, ok=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "[mandatory]  training-job-guardrails" in out, out
    assert "gcp-training-jobs:guardrails.maxJobCostUsd: job tpu's worst case is $978.90 ($5.83/h x 168 h; no " \
        "timeout set: AI Platform Training's default, 7 days), running on demand, over the cap; allowed: at most " \
        "$500.00" in out, out
    assert "job gpu's worst case" not in out, "the gpu job, $208.66 at worst, keeps the cap"


def test_the_pack_alone_stops_a_program_that_bypasses_the_settings(tmp_path: Path, emulator: Emulator) -> None:
    """A consumer program registering TrainingJob itself: nothing but the pack knows the stack's guardrails."""
    project = copy_project(tmp_path, emulator)
    (project.path / "__main__.py").write_text(textwrap.dedent("""\
        from gcp_training_jobs import TrainingJob

        TrainingJob("direct", project="local-project", backend="ai-platform", job={"trainingInput": {
            "scaleTier": "CUSTOM", "region": "us-central1", "runtimeVersion": "2.11", "pythonVersion": "3.7",
            "pythonModule": "trainer.task", "packageUris": ["gs://local-staging-bucket/trainer-0.1.tar.gz"],
            "masterType": "n1-standard-16", "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_V100",
                                                                                  "count": 8}}}})
        """))
    done = project.pulumi("preview", "--policy-pack", PACK, ok=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "[mandatory]  training-job-guardrails" in out, out
    for line in ("gcp-training-jobs:guardrails.allowedAccelerators: job direct uses NVIDIA_TESLA_V100 "
                 "(trainingInput.masterType); allowed: NVIDIA_TESLA_T4, TPU_V2",
                 "gcp-training-jobs:guardrails.requiredLabels: job direct has no label env"):
        assert line in out, out
