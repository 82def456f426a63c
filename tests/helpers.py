"""Shared test helpers (the test modules import these, never each other): job specs and provider inputs, the AI Platform
Training GPU guide's GPU table, bodies checked against Google's discovery schemas, a fake clock, and the wheel
install."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from gcp_training_jobs.emulator.discovery import validate_body

if TYPE_CHECKING:
    from gcp_training_jobs.resources.training_job import TrainingJobProvider

ROOT = Path(__file__).resolve().parents[1]


def script(name: str) -> ModuleType:
    """scripts/NAME.py loaded as the module NAME (the scripts folder is no package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

DIGITS, LOWER = "1234567890123", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
#: One made-up value per gitleaks rule of catalog/credentials.py, in the shape its pattern describes (none is
#: a real credential: each is built here from parts).
CREDENTIAL_SAMPLES = {
    "aws-access-token": "AKIA" + "ABCDEFGHIJKLMNOP",
    "gcp-api-key": "AIza" + "Sy" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q",
    "github-pat": "ghp_" + "aB3" * 12,
    "github-oauth": "gho_" + "aB3" * 12,
    "github-app-token": "ghs_" + "aB3" * 12,
    "github-fine-grained-pat": "github_pat_" + "aB3_" * 20 + "xy",
    "gitlab-pat": "glpat-" + "aB3-x" * 4,
    "huggingface-access-token": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "slack-bot-token": f"xoxb-{DIGITS[:10]}-{DIGITS}-{LOWER[:24]}",
    "slack-user-token": f"xoxp-{DIGITS[:10]}-{DIGITS[:11]}-{DIGITS[:12]}-{LOWER[:32]}",
    "slack-app-token": f"xapp-1-A0{DIGITS[:9]}-{DIGITS}-{LOWER[:40]}",
    "openai-api-key": "sk-" + "aB3" * 6 + "xy" + "T3BlbkFJ" + "aB3" * 6 + "xy",
    "anthropic-api-key": "sk-ant-api03-" + "aB3" * 31 + "AA",
    "stripe-access-token": "sk_live_" + "aB3" * 8,
    "npm-access-token": "npm_" + "ab3" * 12,
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
    "slack-webhook-url": "https://hooks.slack.com/services/T0" + "aB3" * 14 + "x",
    "jwt": "eyJ" + "aB3" * 6 + ".eyJ" + "aB3" * 6 + "." + "aB3_" * 4,
}


def gpu_job(machine: str, gpu: str | None = None, count: int | None = None, *, region: str = "us-central1",
            **extra: Any) -> dict[str, Any]:
    """A complete CUSTOM job with one master, optionally with an acceleratorConfig."""
    ti: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": machine,
        "region": region,
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": ["gs://my-staging-bucket/trainer-0.1.tar.gz"],
    }
    if gpu is not None:
        acc: dict[str, Any] = {"type": gpu}
        if count is not None:
            acc["count"] = count
        ti["masterConfig"] = {"acceleratorConfig": acc}
    ti.update(extra)
    return {"trainingInput": ti}


def assert_ml_body_valid(body: dict[str, Any]) -> None:
    problems = validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True, reject_output_only=True)
    assert problems == [], problems


def assert_vertex_body_valid(body: dict[str, Any]) -> None:
    problems = validate_body("aiplatform", "GoogleCloudAiplatformV1CustomJob", body, strict_int64=True,
                             reject_output_only=True)
    assert problems == [], problems


def container_pool(machine_spec: dict[str, Any], replicaCount: int | str = 1, image: str = "us-docker.pkg.dev/p/r/t:1",  # noqa: N803
                   **extra: Any) -> dict[str, Any]:
    """One CustomJobSpec worker pool running a custom container."""
    return {"machineSpec": machine_spec, "replicaCount": replicaCount, "containerSpec": {"imageUri": image}, **extra}


def custom_job_spec(*pools: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A CustomJobSpec (what `gcloud ai custom-jobs create --config` reads) with these pools and fields."""
    return {"workerPoolSpecs": list(pools), **fields}


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every leaf of a JSON-like value with its path (an empty mapping or list counts as a leaf)."""
    if isinstance(value, dict) and value:
        return [leaf for key, item in value.items() for leaf in leaves(item, (*path, key))]
    if isinstance(value, list) and value:
        return [leaf for i, item in enumerate(value) for leaf in leaves(item, (*path, i))]
    return [(path, value)]


class FakeClock:
    """A clock that moves only when slept on: what the lifecycle gets instead of time.monotonic and time.sleep
    (`Jobs(clock=..., sleep=...)`, or `drive(provider)`), so that its retries, reconcile window and waits are
    counted, never timed, and a busy machine changes nothing. `sleeps` records every sleep; `then` runs after
    each one (e.g. the emulator's `state.advance`, so that its jobs move with this clock)."""

    def __init__(self, then: Callable[[float], Any] | None = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.then = then

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, f"a negative sleep: {seconds}"
        self.sleeps.append(seconds)
        self.now += seconds
        if self.then is not None:
            self.then(seconds)

    def drive(self, provider: Any) -> Any:
        """The provider, its lifecycle on this clock (set on the instance: the class's are time's own)."""
        provider.clock, provider.sleep = self.time, self.sleep
        return provider


# -- TrainingJob provider inputs ---------------------------------------------------------------------

def t4_job(count: int = 2, **labels: str) -> dict[str, Any]:
    job: dict[str, Any] = {"trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": str(count)}},
        "workerType": "n1-standard-8", "workerCount": "2",
        "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": str(count)}},
        "region": "us-central1", "runtimeVersion": "2.11", "pythonVersion": "3.7",
        "pythonModule": "trainer.task", "packageUris": ["gs://my-staging/trainer-abc.tar.gz"],
        "jobDir": "gs://my-job-dir/jobs/resnet",
    }}
    if labels:
        job["labels"] = labels
    return job


IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"


def as_container(job: dict[str, Any]) -> dict[str, Any]:
    """The same job with its code in a container image: on Vertex AI the prebuilt training containers of the
    AI Platform Training guides' runtimes have reached their end of availability, and these tests are about the
    lifecycle."""
    job = copy.deepcopy(job)
    ti = job["trainingInput"]
    for key in ("runtimeVersion", "pythonVersion", "pythonModule", "packageUris"):
        ti.pop(key, None)
    for role in ("masterConfig", "workerConfig"):
        if role in ti:
            ti[role]["imageUri"] = IMAGE
    return job


def provider_props(job: dict[str, Any], *, name: str = "resnet", backend: str = "vertex", project: str = "my-proj",
                   identity: str | None = None, **extra: Any) -> dict[str, Any]:
    """A TrainingJob's inputs as the engine hands them to the provider (TrainingJob's props, camelCase), for a job
    `name` of stack `dev` (its identity, unless given); `extra`: more inputs, or others in place of these."""
    return {"name": name, "project": project, "backend": backend, "job": job, "waitForCompletion": False,
            "waitTimeoutSeconds": None, "identity": identity if identity is not None else f"org/proj/dev/{name}",
            **extra}


def configured(provider: Any, jobs: dict[str, Any], *, project: str = "my-proj", region: str = "us-central1",
               **config: Any) -> Any:
    """`provider` configured as the engine configures it for a Vertex AI stack of these jobs (`jobs`: the stack file's
    `gcp-training-jobs:jobs`; `config`: more keys, `gcp-training-jobs:` ones by their bare name), its config as the
    engine hands it (object values as JSON text): the stack the provider's checks and creates place each job in."""
    from pulumi.dynamic import ConfigureRequest
    from pulumi.dynamic.config import Config

    raw = {"gcp:project": project, "gcp:region": region, "gcp-training-jobs:backend": "vertex",
           "gcp-training-jobs:enableApis": "false",
           "gcp-training-jobs:buckets": json.dumps({"staging": "my-staging", "jobDir": "my-job-dir"}),
           "gcp-training-jobs:jobs": json.dumps(jobs),
           **{f"gcp-training-jobs:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}}
    provider.configure(ConfigureRequest(Config(raw, "proj")))
    return provider


def props(backend: str, job: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A T4 job's inputs (`job`, else t4_job(); on Vertex in a prebuilt container's image)."""
    job = job or t4_job()
    if backend == "vertex" and "trainingInput" in job:
        job = as_container(job)
    return provider_props(job, backend=backend, **extra)


def checked(provider: TrainingJobProvider, news: dict[str, Any], olds: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    result = provider.check(olds or {}, news)
    assert result.failures == [], [(f.property, f.reason) for f in result.failures]
    return dict(result.inputs)


def l4_spot(count: int = 1, machine: str = "g2-standard-8", **labels: str) -> dict[str, Any]:
    """A CustomJobSpec as stack.py sends it: the spec (int64 as strings), its region and labels."""
    job: dict[str, Any] = {"jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": machine, "acceleratorType": "NVIDIA_L4",
                                             "acceleratorCount": count},
                             "replicaCount": "1",
                             "containerSpec": {"imageUri": IMAGE, "args": ["--model-dir=gs://my-job-dir/jobs/l4"]}}],
        "scheduling": {"strategy": "SPOT", "timeout": "7200s"},
        "baseOutputDirectory": {"outputUriPrefix": "gs://my-job-dir/jobs/l4"},
    }, "region": "us-central1"}
    if labels:
        job["labels"] = labels
    return job


def spec_props(job: dict[str, Any] | None = None, backend: str = "vertex", **extra: Any) -> dict[str, Any]:
    return provider_props(job or l4_spot(), backend=backend, **{"name": "l4", "identity": "org/proj/staging/l4",
                                                                 **extra})


def tuning_training_input(**hp: Any) -> dict[str, Any]:
    """A container job with a T4 and a hyperparameters block (what an AI Platform Training tuning config becomes)."""
    return {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
        "masterConfig": {"imageUri": IMAGE, "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        "jobDir": "gs://my-job-dir/jobs/tune",
        "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 6,
                            "maxParallelTrials": 2, "params": [
                                {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.0001, "maxValue": 0.1,
                                 "scaleType": "UNIT_LOG_SCALE"},
                                {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 8}],
                            **hp},
    }}


#: Every field of a CustomJobSpec a user may write, with values Vertex AI accepts together.
FULL = custom_job_spec(
    {
        "machineSpec": {
            "machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8,
            "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                    "key": "compute.googleapis.com/reservation-name",
                                    "values": ["projects/my-proj/zones/us-central1-a/reservations/h100s"]},
        },
        "replicaCount": 1,
        "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 500},
        "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/llm:1.0", "command": ["python", "-m"],
                          "args": ["trainer.task", "--epochs=3"], "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]},
        "nfsMounts": [{"server": "10.0.0.2", "path": "/exports/data", "mountPoint": "data"}],
        "lustreMounts": [{"instanceIp": "10.0.0.3", "volumeHandle": "vol-1", "filesystem": "lfs",
                          "mountPoint": "scratch"}],
    },
    {},
    {
        "machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                        "acceleratorCount": 8},
        "replicaCount": "3",
        "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/llm:1.0", "args": []},
    },
    scheduling={"strategy": "STANDARD", "timeout": "86400s", "maxWaitDuration": "0s",
                "restartJobOnWorkerRestart": True, "disableRetries": False},
    serviceAccount="trainer@my-proj.iam.gserviceaccount.com",
    network="projects/123456789012/global/networks/ml-vpc",
    reservedIpRanges=["vertex-ai-ip-range"],
    baseOutputDirectory={"outputUriPrefix": "gs://my-bucket/out"},
    tensorboard="projects/my-proj/locations/us-central1/tensorboards/42",
    enableWebAccess=True,
    enableDashboardAccess=False,
    experiment="projects/my-proj/locations/us-central1/metadataStores/default/contexts/llm",
    experimentRun="projects/my-proj/locations/us-central1/metadataStores/default/contexts/llm-run-1",
    models=["projects/my-proj/locations/us-central1/models/7"],
    protectedArtifactLocationId="us-central1",
    pscInterfaceConfig={"networkAttachment": "projects/my-proj/regions/us-central1/networkAttachments/na",
                        "dnsPeeringConfigs": [{"domain": "corp.", "targetProject": "p", "targetNetwork": "n"}]},
)


# -- the GPU guide's GPU table, transcribed from the guide independently of the catalog -----------------------

K80, P4, P100, T4, V100, A100 = (
    "NVIDIA_TESLA_K80", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_A100",
)

# The AI Platform Training GPU guide (https://cloud.google.com/ai-platform/training/docs/using-gpus), "Números
# válidos de GPUs para cada tipo de máquina" (columns K80, P4, P100, T4, V100; A100 on a2).
GUIDE_GPU_TABLE = """
n1-standard-4   | 1,2,4,8 | 1,2,4 | 1,2,4 | 1,2,4 | 1,2,4,8
n1-standard-8   | 1,2,4,8 | 1,2,4 | 1,2,4 | 1,2,4 | 1,2,4,8
n1-standard-16  | 2,4,8   | 1,2,4 | 1,2,4 | 1,2,4 | 2,4,8
n1-standard-32  | 4,8     | 2,4   | 2,4   | 2,4   | 4,8
n1-standard-64  |         | 4     |       | 4     | 8
n1-standard-96  |         | 4     |       | 4     | 8
n1-highmem-2    | 1,2,4,8 | 1,2,4 | 1,2,4 | 1,2,4 | 1,2,4,8
n1-highmem-4    | 1,2,4,8 | 1,2,4 | 1,2,4 | 1,2,4 | 1,2,4,8
n1-highmem-8    | 1,2,4,8 | 1,2,4 | 1,2,4 | 1,2,4 | 1,2,4,8
n1-highmem-16   | 2,4,8   | 1,2,4 | 1,2,4 | 1,2,4 | 2,4,8
n1-highmem-32   | 4,8     | 2,4   | 2,4   | 2,4   | 4,8
n1-highmem-64   |         | 4     |       | 4     | 8
n1-highmem-96   |         | 4     |       | 4     | 8
n1-highcpu-16   | 2,4,8   | 1,2,4 | 1,2,4 | 1,2,4 | 2,4,8
n1-highcpu-32   | 4,8     | 2,4   | 2,4   | 2,4   | 4,8
n1-highcpu-64   | 8       | 4     | 4     | 4     | 8
n1-highcpu-96   |         | 4     |       | 4     | 8
"""
A2 = {"a2-highgpu-1g": 1, "a2-highgpu-2g": 2, "a2-highgpu-4g": 4, "a2-highgpu-8g": 8, "a2-megagpu-16g": 16}


def guide_gpu_table() -> dict[str, dict[str, tuple[int, ...]]]:
    table: dict[str, dict[str, tuple[int, ...]]] = {}
    for line in GUIDE_GPU_TABLE.strip().splitlines():
        machine, *cells = (c.strip() for c in line.split("|"))
        table[machine] = {
            gpu: tuple(int(n) for n in cell.split(","))
            for gpu, cell in zip((K80, P4, P100, T4, V100), cells, strict=True)
            if cell
        }
    for machine, count in A2.items():
        table[machine] = {A100: (count,)}
    return table


TABLE = guide_gpu_table()
GPUS = (K80, P4, P100, T4, V100, A100)
ALLOWED = [(m, g, c) for m, row in TABLE.items() for g, counts in row.items() for c in counts]


# -- the wheel, installed into a fresh virtualenv ------------------------------------------------------

def run_ok(*cmd: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(tmp_path: Path, dist: Path | None = None) -> Path:
    """A wheel of the repository, built (nothing downloaded) into `dist` (default `tmp_path/dist`): its path."""
    source = tmp_path / "source"  # built from a copy: setuptools writes build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "gcp_training_jobs", source / "gcp_training_jobs",
                    ignore=shutil.ignore_patterns("__pycache__"))
    dist = dist or tmp_path / "dist"
    run_ok(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, source)
    return next(dist.glob("gcp_training_jobs-*.whl"))


def venv_beside_ours(where: Path, *, with_pip: bool = False) -> tuple[Path, Path]:
    """A fresh virtualenv at `where` whose packages are the test venv's (a .pth file: nothing is downloaded, nothing
    of this repository is on its path): (its python, its site)."""
    run_ok(sys.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), where)
    python = where / "bin" / "python"
    site = Path(run_ok(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site


def install_wheel(tmp_path: Path) -> tuple[Path, Path]:
    """A wheel of the repository installed into a fresh virtualenv under `tmp_path`: (its python, its site)."""
    wheel = build_wheel(tmp_path)
    python, site = venv_beside_ours(tmp_path / "fresh")
    run_ok(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)
    return python, site


def control(emulator: Any, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST a control request to the emulator (`/_emulator/PATH`): its status and JSON answer."""
    request = urllib.request.Request(emulator.url + "_emulator/" + path, data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def git(repo: Path, *args: str) -> str:
    """git in a scratch repository, as a test's own user (no signing), its stdout."""
    done = subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com",
                           "-c", "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Everything in the scratch repository committed; the commit's id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def scratch_project(tmp: Path) -> Path:
    """`tmp/repo`: a git repository (branch main, nothing committed) holding the project's Pulumi.yaml and
    __main__.py and an empty stacks folder, for a test to write its stacks in and `plan` or `diff` them."""
    repo = tmp / "repo"
    (repo / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy2(ROOT / name, repo / name)
    git(repo, "init", "-q", "-b", "main")
    return repo


@contextmanager
def scratch_review(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A module's scratch repository (scratch_project, in a folder named `name`), reviewed offline (offline_review)
    from inside it (the working directory) until the context ends: the caller writes and commits its sides."""
    tmp = tmp_path_factory.mktemp(name)
    repo = scratch_project(tmp)
    with pytest.MonkeyPatch.context() as env:
        offline_review(env, tmp)  # offline: a client that tried to reach Google would fail
        env.chdir(repo)
        yield repo


def offline_review(env: pytest.MonkeyPatch, tmp: Path) -> None:
    """The environment a plan or diff of a scratch repository runs in: none of the caller's PULUMI_ settings, the
    bundled price table (as conftest sets), a build folder of its own, and proxies that fail any call that would
    leave the machine."""
    from gcp_training_jobs.jobspec.catalog.prices import PRICES_FILE_ENV
    from gcp_training_jobs.jobspec.core.env import VARIABLES

    for key in [k for k in os.environ if k.startswith("PULUMI_")]:
        env.delenv(key)
    env.setenv(PRICES_FILE_ENV, str(tmp / "no-refreshed-prices.json"))
    env.setenv(VARIABLES["build_dir"], str(tmp / "build"))
    for proxy in ("HTTPS_PROXY", "HTTP_PROXY"):
        env.setenv(proxy, "http://127.0.0.1:9")


def rest(emulator: Any, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """A call to the emulator's REST API over real HTTP, as gcloud makes it: (its status, its JSON answer)."""
    request = urllib.request.Request(f"{emulator.url.rstrip('/')}/v1/{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def stack_file_problems(path: Path) -> list[str]:
    """The problems a stack file is refused with (it must be: SpecError), each as its line (FILE: PATH: message)."""
    from gcp_training_jobs.jobspec.core.errors import SpecError
    from gcp_training_jobs.resources.settings import load_stack_file

    with pytest.raises(SpecError) as refused:
        load_stack_file(path, root=ROOT)
    return [str(p) for p in refused.value.problems]
