"""`python -m components validate|render` as a user runs them: exit codes 0/1/2, one problem a line, no
traceback, and no import of pulumi, pulumi_gcp or googleapiclient."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec.core.names import TODAY_ENV
from tests.helpers import assert_ml_body_valid, assert_vertex_body_valid, provider_props

ROOT = Path(__file__).resolve().parents[1]
GUIDE_EXAMPLES = ROOT / "tests" / "fixtures" / "guide_examples"


#: Judge as of this day where a test renders the guides' runtime 2.11 to Vertex AI's tf-*.2-11 containers
#: (end of availability 2024-11-15; every prebuilt image is past its date on 2026-11-22).
BEFORE_TF_2_11_END = "2024-06-01"


def run(*args: str, cwd: Path = ROOT, today: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **({TODAY_ENV: today} if today else {})}
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env=env)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.slow
def test_validate_accepts_the_guide_examples_folder() -> None:
    done = run("validate", str(GUIDE_EXAMPLES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": ok (job)") == 5


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.slow
def test_validate_ends_at_once_yet_flushes_its_output_or_says_it_could_not(tmp_path: Path) -> None:
    """validate ends without the interpreter's teardown: its lines are all written first (to a file here), and
    output that cannot be written (a full disk) is one line and exit 120, Python's own, without a traceback."""
    with (tmp_path / "out.txt").open("w") as out:
        done = subprocess.run([sys.executable, "-m", "components", "validate", str(GUIDE_EXAMPLES)], cwd=ROOT,
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 0 and (tmp_path / "out.txt").read_text().count(": ok (job)") == 5, done.stderr
    with Path("/dev/full").open("w") as full:
        done = subprocess.run([sys.executable, "-m", "components", "validate", str(GUIDE_EXAMPLES)], cwd=ROOT,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 120 and "Traceback" not in done.stderr, done.stderr
    # One line in the project's words; the reason after them is the system's.
    assert done.stderr.startswith("the output could not be written: ") and done.stderr.count("\n") == 1


@pytest.mark.slow
def test_validate_prints_one_problem_a_line_with_file_and_field(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "trainingInput:\n  scaleTier: CUSTOM\n  masterType: n1-standard-4\n"
                "  masterConfig:\n    acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 3}\n  workerCount: 2\n")
    good = write(tmp_path / "good.yaml", (GUIDE_EXAMPLES / "gpu_legacy.yaml").read_text())
    done = run("validate", "-q", str(bad), str(good))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{bad}: trainingInput.workerType: required because workerCount is 2",
        f"{bad}: trainingInput.masterConfig.acceleratorConfig.count: 3 NVIDIA_TESLA_T4 on n1-standard-4; "
        "allowed: 1, 2, 4",
    ]
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_validate_exit_2_for_unreadable_input_without_traceback(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.yaml", "trainingInput: [\n")
    done = run("validate", str(broken), str(tmp_path / "missing.yaml"))
    assert done.returncode == 2
    first, second = done.stderr.splitlines()
    # The project's words name the file, line and column; what follows is the parser's own, which differs
    # between libyaml builds and PyYAML's pure-Python parser.
    assert first.startswith(f"{broken}:2:1: not valid YAML: ") and len(first) > len(f"{broken}:2:1: not valid YAML: ")
    assert second == f"{tmp_path / 'missing.yaml'}: no such file"
    dup = write(tmp_path / "dup.yaml", "trainingInput:\n  region: us-east1\n  region: us-west1\n")
    assert run("validate", str(dup)).returncode == 2


@pytest.mark.parametrize("content", ["just a string\n", "- a\n- list\n", "{}\n"])
@pytest.mark.slow
def test_validate_refuses_documents_that_are_not_jobs(tmp_path: Path, content: str) -> None:
    done = run("validate", str(write(tmp_path / "odd.yaml", content)))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stdout.startswith(f"{tmp_path / 'odd.yaml'}: ")


@pytest.mark.slow
def test_validate_with_backend_vertex_applies_vertex_limits() -> None:
    assert run("validate", str(GUIDE_EXAMPLES / "gpu_legacy.yaml")).returncode == 0
    done = run("validate", "--backend", "vertex", str(GUIDE_EXAMPLES / "gpu_legacy.yaml"))
    assert done.returncode == 1
    assert "NVIDIA_TESLA_K80 is not offered by Vertex AI" in done.stdout


@pytest.mark.slow
def test_gcloud_flags_complete_and_override_the_file() -> None:
    done = run("validate", str(GUIDE_EXAMPLES / "basic_tpu_resnet.yaml"), "--region", "europe-west1")
    assert done.returncode == 1
    assert "trainingInput.region: 'europe-west1' has no Cloud TPUs; allowed: us-central1" in done.stdout


CODE_FLAGS = ("--module-name", "trainer.task", "--package-uris", "gs://my-bucket/trainer.tar.gz")


@pytest.mark.slow
def test_render_prints_the_ml_body_with_the_job_id_from_the_file_name(tmp_path: Path) -> None:
    config = write(tmp_path / "2-gpu config.yaml", (GUIDE_EXAMPLES / "gpu_compute_engine.yaml").read_text())
    done = run("render", str(config), *CODE_FLAGS)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["jobId"] == "job_2_gpu_config"
    assert body["trainingInput"]["workerCount"] == "9"
    assert body["trainingInput"]["region"] == "us-central1"
    assert_ml_body_valid(body)
    assert json.loads(run("render", str(config), "--job-id", "mine", *CODE_FLAGS).stdout)["jobId"] == "mine"


@pytest.mark.slow
def test_render_refuses_a_body_the_api_would_reject_for_lack_of_module_or_package(tmp_path: Path) -> None:
    """validate lets gcloud's submit flags be missing; render never prints `"pythonModule": ""`."""
    config = write(tmp_path / "config.yaml", (GUIDE_EXAMPLES / "gpu_compute_engine.yaml").read_text())
    assert run("validate", str(config)).returncode == 0
    done = run("render", str(config))
    assert done.returncode == 1 and done.stdout == ""  # stdout is for the body only
    assert f"{config}: trainingInput.pythonModule: required without masterConfig.imageUri" in done.stderr
    assert f"{config}: trainingInput.packageUris: required without masterConfig.imageUri" in done.stderr


@pytest.mark.slow
def test_render_vertex_prints_a_custom_job() -> None:
    done = run("render", str(GUIDE_EXAMPLES / "gpu_compute_engine.yaml"), "--backend", "vertex", "--module-name",
               "trainer.task", "--package-uris", "gs://my-bucket/trainer.tar.gz", today=BEFORE_TF_2_11_END)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["displayName"] == "gpu_compute_engine"
    assert [p["replicaCount"] for p in body["jobSpec"]["workerPoolSpecs"]] == ["1", "9", "3"]
    assert_vertex_body_valid(body)


@pytest.mark.slow
def test_render_of_an_invalid_spec_exits_1_with_the_problems(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "trainingInput:\n  scaleTier: BASIC_GPU\n  region: asia-south1\n")
    done = run("render", str(bad))
    assert done.returncode == 1 and done.stderr.startswith(f"{bad}: trainingInput.scaleTier: NVIDIA_TESLA_K80")
    assert done.stdout == ""


@pytest.mark.slow
def test_validate_and_render_import_neither_pulumi_nor_googleapiclient() -> None:
    script = (
        "import os, sys\n"
        f"os.environ[{TODAY_ENV!r}] = {BEFORE_TF_2_11_END!r}\n"
        "from gcp_training_jobs.cli.main import main\n"
        f"assert main(['validate', '-q', {str(GUIDE_EXAMPLES)!r}]) == 0\n"
        f"assert main(['render', {str(GUIDE_EXAMPLES / 'gpu_legacy.yaml')!r}, *{CODE_FLAGS!r}]) == 0\n"
        f"assert main(['render', {str(GUIDE_EXAMPLES / 'gpu_compute_engine.yaml')!r}, '--backend', 'vertex', "
        f"*{CODE_FLAGS!r}]) == 0\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'googleapiclient'))\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout


def loaded_after(script: str, cwd: Path = ROOT) -> dict[str, list[str]]:
    """The modules of the command line's folders and the libraries a command needs, loaded after `script` runs in
    a fresh interpreter: {"cli": [...], "libraries": [...]}."""
    script += (
        "\nimport json, sys\n"
        "cli = sorted(m for m in sys.modules if m.startswith('gcp_training_jobs.cli.'))\n"
        "libraries = sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml', 'pulumi', 'pulumi_gcp', "
        "'googleapiclient'})\n"
        "print('LOADED', json.dumps({'cli': cli, 'libraries': libraries}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT), TODAY_ENV: BEFORE_TF_2_11_END})
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.split("LOADED ", 1)[1]))


def test_each_command_loads_only_what_it_runs() -> None:
    """The parser every command builds loads no command and no pydantic or YAML (the emulator's command needs
    neither); validate loads none of plan/, diff/ or live/; none of them loads Pulumi."""
    parsed = loaded_after("from gcp_training_jobs.cli.main import parser\n"
                          "parser().parse_args(['emulator'])\n")
    assert parsed["libraries"] == []
    assert parsed["cli"] == ["gcp_training_jobs.cli.gcloud_flags", "gcp_training_jobs.cli.job_args",
                             "gcp_training_jobs.cli.main", "gcp_training_jobs.cli.prices",
                             "gcp_training_jobs.cli.terminal"]  # every command's output escaped (standard library)
    validated = loaded_after("from gcp_training_jobs.cli.main import main\n"
                             f"assert main(['validate', '-q', {str(GUIDE_EXAMPLES)!r}]) == 0\n")
    assert validated["libraries"] == ["pydantic", "yaml"]
    assert not [m for m in validated["cli"] if m.split(".")[2] in ("plan", "diff", "live")], validated["cli"]


def test_the_prices_command_names_the_variables_the_settings_read() -> None:
    """prices' parser names its variables without importing the settings' model: the same names."""
    from gcp_training_jobs.cli.prices import variable
    from gcp_training_jobs.jobspec.core.env import VARIABLES

    assert {field: variable(field) for field in VARIABLES} == dict(VARIABLES)


#: A project of one Vertex AI stack whose one job runs on the emulator (its apiEndpoint).
STACK_ON_THE_EMULATOR = """\
config:
  gcp:project: my-proj
  gcp:region: us-central1
  gcp-training-jobs:backend: vertex
  gcp-training-jobs:apiEndpoint: {url}
  gcp-training-jobs:enableApis: false
  gcp-training-jobs:buckets: {{staging: my-staging, jobDir: my-job-dir}}
  gcp-training-jobs:jobs:
    cpu:
      jobSpec:
        workerPoolSpecs:
        - machineSpec: {{machineType: n1-standard-8}}
          replicaCount: 1
          containerSpec: {{imageUri: us-docker.pkg.dev/my-proj/trainers/resnet:1.0}}
"""


@pytest.mark.slow
def test_status_logs_spend_and_diff_import_no_pulumi(tmp_path: Path, emulator: Any, provider: Any) -> None:
    """status, logs and spend run against the emulator (a job made as `pulumi up` makes it) in a process that loads
    no pulumi or pulumi_gcp module; diff's module and its parsing, `diff --help` included, load none either (it
    imports the program's harness, and with it Pulumi, only when it plans)."""
    from gcp_training_jobs.resources.job_model.inputs import wire_of
    from gcp_training_jobs.resources.settings import load_stack_file

    (tmp_path / "Pulumi.yaml").write_text("name: gcp-training-jobs\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    stack = write(tmp_path / "stacks" / "Pulumi.team.yaml", STACK_ON_THE_EMULATOR.format(url=emulator.url))
    settings = load_stack_file(stack)
    checked = provider.check({}, provider_props(wire_of(settings.jobs["cpu"].job), name="cpu",
                                                identity="organization/gcp-training-jobs/team/cpu"))
    assert checked.failures == []
    provider.create(checked.inputs)
    script = (
        "import sys\n"
        "from gcp_training_jobs.cli.main import main, parser\n"
        "codes = [main(['status', '--stack', 'team']), main(['logs', '--stack', 'team', 'cpu']),\n"
        "         main(['spend', '--stack', 'team', '--json'])]\n"
        "import gcp_training_jobs.cli.diff.command\n"
        "parser().parse_args(['diff', '--base', 'main', '--stack', 'team', '--json'])\n"
        "try:\n"
        "    main(['diff', '--help'])\n"
        "except SystemExit as end:\n"
        "    codes.append(end.code)\n"
        "print('CODES', codes)\n"
        "print('PULUMI', sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "stack team (vertex, project my-proj): 1 job;" in done.stdout  # status read the job from the API
    assert "CODES [0, 0, 0, 0]" in done.stdout and "PULUMI []" in done.stdout


# --- Vertex AI's own vocabulary: a CustomJobSpec, as `gcloud ai custom-jobs create --config FILE --region R` ---

A3_SPOT = """\
# gcloud ai custom-jobs create --region us-east5 --display-name llm --config a3.yaml
workerPoolSpecs:
  machineSpec:
    machineType: a3-highgpu-8g
    acceleratorType: NVIDIA_H100_80GB
    acceleratorCount: 8
  replicaCount: 1
  containerSpec:
    imageUri: us-docker.pkg.dev/my-proj/trainers/llm:1.0
    args: [--epochs=3]
scheduling:
  strategy: SPOT
  timeout: 86400s
"""


@pytest.mark.slow
def test_validate_and_render_a_custom_job_spec_with_gcloud_s_region(tmp_path: Path) -> None:
    config = write(tmp_path / "a3.yaml", A3_SPOT)
    assert run("validate", str(config), "--region", "us-east5").stdout == f"{config}: ok (job)\n"
    done = run("render", "--config", str(config), "--region", "us-east5")
    assert done.returncode == 0, done.stdout + done.stderr
    body = json.loads(done.stdout)
    assert_vertex_body_valid(body)
    assert body["displayName"] == "a3"
    assert body["jobSpec"]["scheduling"] == {"timeout": "86400s", "strategy": "SPOT"}
    (pool,) = body["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                                   "acceleratorCount": 8}
    assert pool["replicaCount"] == "1" and pool["containerSpec"]["args"] == ["--epochs=3"]
    refused = run("validate", str(config), "--region", "us-west2")
    assert refused.returncode == 1
    assert refused.stdout.startswith(f"{config}: workerPoolSpecs.machineSpec.acceleratorType: NVIDIA_H100_80GB is "
                                     "not offered for training in us-west2; allowed in us-west2: NVIDIA_B200, "
                                     "NVIDIA_TESLA_P4, NVIDIA_TESLA_T4; regions offering NVIDIA_H100_80GB: ")
    ml = run("render", str(config), "--backend", "ai-platform")
    assert ml.returncode == 1 and "runs on Vertex AI only" in ml.stderr and ml.stdout == ""


@pytest.mark.slow
def test_validate_refuses_snake_case_keys_as_gcloud_does(tmp_path: Path) -> None:
    config = write(tmp_path / "snake.yaml", A3_SPOT.replace("machineType", "machine_type"))
    done = run("validate", "-q", str(config), "--region", "us-east5")
    assert done.returncode == 1
    assert done.stdout.startswith(f"{config}: workerPoolSpecs.machineSpec.machine_type: unknown field 'machine_type' "
                                  "(did you mean machineType? keys are camelCase)")


@pytest.mark.slow
def test_a_training_input_with_a_current_machine_type_validates_for_vertex(tmp_path: Path) -> None:
    config = write(tmp_path / "a3-ti.yaml", "trainingInput:\n  scaleTier: CUSTOM\n  masterType: a3-highgpu-8g\n"
                   "  masterConfig:\n    imageUri: us-docker.pkg.dev/p/r/llm:1\n  region: us-central1\n")
    assert run("validate", "-q", str(config), "--backend", "vertex").returncode == 0
    done = run("validate", "-q", str(config))
    assert done.returncode == 1 and "is a machine type of Vertex AI, not of AI Platform Training" in done.stdout
    body = json.loads(run("render", str(config), "--backend", "vertex").stdout)
    assert_vertex_body_valid(body)
    assert body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {"machineType": "a3-highgpu-8g"}


@pytest.mark.slow
def test_a_machine_type_problem_lists_its_family_not_every_type(tmp_path: Path) -> None:
    config = write(tmp_path / "typo.yaml", A3_SPOT.replace("a3-highgpu-8g", "a3-highgpu-16g"))
    line = run("validate", "-q", str(config), "--region", "us-east5").stdout.splitlines()[0]
    assert line.endswith("allowed: a3-highgpu-1g, a3-highgpu-2g, a3-highgpu-4g, a3-highgpu-8g")
    assert len(line) < 300


#: The warning a TPU shape of the AI Platform Training TPU guide gets on Vertex AI
#: (gcp_training_jobs.jobspec.translate.pools:
#: the master left out).
TPU_MASTER_WARNING = ("is not used on Vertex AI: there the TPU VM runs the code itself, so the job is one cloud-tpu "
                      "pool (8 TPU_V2 cores) running the master's code; AI Platform Training ran that master beside "
                      "the TPU")


@pytest.mark.slow
def test_validate_and_render_warn_on_stderr_of_the_master_a_tpu_job_leaves_out_on_vertex(tmp_path: Path) -> None:
    """The TPU guide's CUSTOM shape (a master beside one cloud_tpu worker) in a custom container: valid on Vertex AI,
    one cloud-tpu pool; the master it leaves out is a warning, `FILE: warning: PATH: message` on stderr, never on
    stdout (one problem or ok a line there; the body only, for render)."""
    config = write(tmp_path / "tpu.yaml", (GUIDE_EXAMPLES / "tpu_compute_engine_master.yaml").read_text()
                   + "  masterConfig:\n    imageUri: us-docker.pkg.dev/p/r/resnet:1\n")
    warning = f"{config}: warning: trainingInput.masterType: the master n1-highcpu-16 {TPU_MASTER_WARNING}"
    done = run("validate", "--backend", "vertex", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"{config}: ok (job)"]
    assert done.stderr.splitlines() == [warning]
    assert run("validate", "--backend", "vertex", "-q", str(config)).stderr.splitlines() == [warning]
    on_ml = run("validate", str(config))  # AI Platform Training runs the master: nothing to warn of
    assert on_ml.returncode == 0 and on_ml.stderr == ""

    done = run("render", str(config), "--backend", "vertex")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [warning]
    body = json.loads(done.stdout)
    assert_vertex_body_valid(body)
    (pool,) = body["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8}
    assert pool["containerSpec"] == {"imageUri": "us-docker.pkg.dev/p/r/resnet:1"}


@pytest.mark.slow
def test_validate_of_the_stacks_warns_of_dev_s_tpu_master_at_its_key() -> None:
    done = run("validate", "stacks/")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stacks/Pulumi.dev.yaml: ok (stack)" in done.stdout.splitlines()
    assert done.stderr.splitlines() == [
        "stacks/Pulumi.dev.yaml: warning: gcp-training-jobs:jobs.resnet.trainingInput.scaleTier: BASIC_TPU's "
        f"standard master {TPU_MASTER_WARNING}"]


@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_short_command_judges_with_the_collector_on(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`entry` pauses Python's cyclic collector while a short command's modules load; the command itself runs with it
    on, so the memory of a long run of files stays bounded."""
    import gc

    from gcp_training_jobs.cli import main

    seen: list[bool] = []
    monkeypatch.setattr(f"gcp_training_jobs.cli.{command}.cmd_{command}", lambda args: seen.append(gc.isenabled()) or 0)
    gc.disable()
    try:
        assert getattr(main, f"cmd_{command}")(argparse.Namespace()) == 0
    finally:
        gc.enable()
    assert seen == [True]
