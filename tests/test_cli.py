"""`python -m components validate|render` as a user runs them: exit codes 0/1/2, one problem a line, no
traceback, and no import of pulumi, pulumi_gcp or googleapiclient."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import assert_ml_body_valid, assert_vertex_body_valid

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "tests" / "fixtures" / "seeds"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_validate_accepts_the_seed_folder() -> None:
    done = run("validate", str(SEEDS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": ok (job)") == 5


def test_validate_prints_one_problem_a_line_with_file_and_field(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "trainingInput:\n  scaleTier: CUSTOM\n  masterType: n1-standard-4\n"
                "  masterConfig:\n    acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 3}\n  workerCount: 2\n")
    good = write(tmp_path / "good.yaml", (SEEDS / "gpu_legacy.yaml").read_text())
    done = run("validate", "-q", str(bad), str(good))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{bad}: trainingInput.workerType: required because workerCount is 2",
        f"{bad}: trainingInput.masterConfig.acceleratorConfig.count: 3 NVIDIA_TESLA_T4 on n1-standard-4; "
        "allowed: 1, 2, 4",
    ]
    assert "Traceback" not in done.stderr


def test_validate_exit_2_for_unreadable_input_without_traceback(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.yaml", "trainingInput: [\n")
    done = run("validate", str(broken), str(tmp_path / "missing.yaml"))
    assert done.returncode == 2
    first, second = done.stderr.splitlines()
    # libyaml's parser and PyYAML's pure one word it differently; both name the file, line and column.
    assert first in (f"{broken}:2:1: not valid YAML: did not find expected node content",
                     f"{broken}:2:1: not valid YAML: expected the node content, but found '<stream end>'")
    assert second == f"{tmp_path / 'missing.yaml'}: no such file"
    dup = write(tmp_path / "dup.yaml", "trainingInput:\n  region: us-east1\n  region: us-west1\n")
    assert run("validate", str(dup)).returncode == 2


@pytest.mark.parametrize("content", ["just a string\n", "- a\n- list\n", "{}\n"])
def test_validate_refuses_documents_that_are_not_jobs(tmp_path: Path, content: str) -> None:
    done = run("validate", str(write(tmp_path / "odd.yaml", content)))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stdout.startswith(f"{tmp_path / 'odd.yaml'}: ")


def test_validate_with_backend_vertex_applies_vertex_limits() -> None:
    assert run("validate", str(SEEDS / "gpu_legacy.yaml")).returncode == 0
    done = run("validate", "--backend", "vertex", str(SEEDS / "gpu_legacy.yaml"))
    assert done.returncode == 1
    assert "NVIDIA_TESLA_K80 is not offered by Vertex AI" in done.stdout


def test_gcloud_flags_complete_and_override_the_file() -> None:
    done = run("validate", str(SEEDS / "basic_tpu_resnet.yaml"), "--region", "europe-west1")
    assert done.returncode == 1
    assert "trainingInput.region: 'europe-west1' has no Cloud TPUs; allowed: us-central1" in done.stdout


def test_render_prints_the_ml_body_with_the_job_id_from_the_file_name(tmp_path: Path) -> None:
    config = write(tmp_path / "2-gpu config.yaml", (SEEDS / "gpu_compute_engine.yaml").read_text())
    done = run("render", str(config))
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["jobId"] == "job_2_gpu_config"
    assert body["trainingInput"]["workerCount"] == "9"
    assert body["trainingInput"]["region"] == "us-central1"
    assert_ml_body_valid(body)
    assert json.loads(run("render", str(config), "--job-id", "mine").stdout)["jobId"] == "mine"


def test_render_vertex_prints_a_custom_job() -> None:
    done = run("render", str(SEEDS / "gpu_compute_engine.yaml"), "--backend", "vertex", "--module-name",
               "trainer.task", "--package-uris", "gs://my-bucket/trainer.tar.gz")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["displayName"] == "gpu_compute_engine"
    assert [p["replicaCount"] for p in body["jobSpec"]["workerPoolSpecs"]] == ["1", "9", "3"]
    assert_vertex_body_valid(body)


def test_render_of_an_invalid_spec_exits_1_with_the_problems(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "trainingInput:\n  scaleTier: BASIC_GPU\n  region: asia-south1\n")
    done = run("render", str(bad))
    assert done.returncode == 1 and done.stdout.startswith(f"{bad}: trainingInput.scaleTier: NVIDIA_TESLA_K80")


def test_validate_and_render_import_neither_pulumi_nor_googleapiclient() -> None:
    script = (
        "import sys\n"
        "from components.cli.main import main\n"
        f"assert main(['validate', '-q', {str(SEEDS)!r}]) == 0\n"
        f"assert main(['render', {str(SEEDS / 'gpu_legacy.yaml')!r}]) == 0\n"
        f"assert main(['render', {str(SEEDS / 'gpu_compute_engine.yaml')!r}, '--backend', 'vertex']) == 0\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'googleapiclient'))\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout
