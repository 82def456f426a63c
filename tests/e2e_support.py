"""What the end-to-end tests share: the real Pulumi CLI, the emulator as a separate process, and a copy of the
project in a temporary folder with its own file state backend."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CACHE = Path(os.environ.get("PULUMI_ENGINE_CACHE", Path.home() / ".cache/gcp-training-jobs/pulumi-engine"))
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "components", "gcp_training_jobs", "trainers", "requirements.txt",
                 "policies")
LIVE_STATES = frozenset({"QUEUED", "PREPARING", "RUNNING", "JOB_STATE_QUEUED", "JOB_STATE_PENDING",
                         "JOB_STATE_RUNNING"})


#: The buckets the repository's local stacks name (they exist nowhere: the emulator never reads them).
LOCAL_BUCKETS = {"staging": "local-staging-bucket", "jobDir": "local-job-dir-bucket"}


def offline_config(name: str, jobs: dict[str, Any], *, backend: str = "vertex",
                   buckets: dict[str, str] | None = None, **keys: Any) -> dict[str, Any]:
    """A stack's config for the emulator that registers no `gcp:` resources (buckets named, no APIs enabled):
    project NAME-project in us-central1, buckets NAME-staging and NAME-job-dir unless `buckets` names them, and
    `keys`, more gcp-training-jobs keys (labels, tpuAccess, guardrails, ...)."""
    return {
        "gcp:project": f"{name}-project",
        "gcp:region": "us-central1",
        "gcp-training-jobs:backend": backend,
        "gcp-training-jobs:enableApis": False,
        "gcp-training-jobs:buckets": buckets or {"staging": f"{name}-staging", "jobDir": f"{name}-job-dir"},
        **{f"gcp-training-jobs:{key}": value for key, value in keys.items()},
        "gcp-training-jobs:jobs": jobs,
    }


# --- An earlier release's tree and the stack the upgrade tests deploy with it ----------------------------------

#: The releases tests/test_e2e_upgrade.py upgrades from: the first release, the last landing before the provider
#: became a package (resources/training_job/) and the job input's module was renamed (job_wire -> job_inputs), and
#: the last before TrainingJob's inputs were declared once (job_model/declared.py).
RELEASES = {"59f59fa": "59f59fa0b0f8b52f6532d8a522392cc858976d37",
            "8b2f7fb": "8b2f7fb263ecfbad93ff4ad088dc756a5e90cc0f",
            "4f85326": "4f85326609b08447b093c8be702ee4ef07cf4302",
            "98df59e": "98df59e3191b1d315acc06bb81da8cc9aca218fe"}
#: The emulator process's phase length (Emulator.start): jobs stay in a state until advanced.
PHASE_SECONDS = 1_000_000
#: What moves a new job from QUEUED through PREPARING into the middle of RUNNING.
TO_RUNNING_SECONDS = 2.5 * PHASE_SECONDS
CREATE = {"ai-platform": "jobs.create", "vertex": "customJobs.create"}
CANCEL = {"ai-platform": "jobs.cancel", "vertex": "customJobs.cancel"}
RUNNING = {"ai-platform": "RUNNING", "vertex": "JOB_STATE_RUNNING"}
CANCELLED = {"ai-platform": "CANCELLED", "vertex": "JOB_STATE_CANCELLED"}
UPGRADE_IMAGE = "us-central1-docker.pkg.dev/upgrade-project/trainers/example:0.1"
UPGRADE_L4 = {"type": "NVIDIA_L4", "count": 1}


def stack_config(backend: str) -> dict[str, Any]:
    """Two jobs in the vocabularies the release supports on `backend`: on Vertex AI one written as a CustomJobSpec and
    one in AI Platform Training's trainingInput (translated); on AI Platform Training two trainingInput jobs, like the
    `local` stack. Named for what tests/test_e2e_upgrade.py does with them: `kept` stays in the stack, `removed`
    leaves it after the upgrade."""
    if backend == "vertex":
        kept: dict[str, Any] = {"labels": {"purpose": "trial"}, "jobSpec": {
            "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                                 "acceleratorCount": 1},
                                 "replicaCount": 1,
                                 "containerSpec": {"imageUri": UPGRADE_IMAGE, "args": ["--model-dir=${jobDir}"]}}],
            "scheduling": {"strategy": "SPOT"}}}
        removed: dict[str, Any] = {"trainingInput": {
            "scaleTier": "CUSTOM", "region": "us-central1", "args": ["--model-dir=${jobDir}"],
            "masterType": "g2-standard-8", "masterConfig": {"acceleratorConfig": UPGRADE_L4, "imageUri": UPGRADE_IMAGE},
            "workerType": "g2-standard-8", "workerCount": 1,
            "workerConfig": {"acceleratorConfig": UPGRADE_L4, "imageUri": UPGRADE_IMAGE}}}
    else:
        kept = {"labels": {"team": "vision"}, "trainingInput": {
            "scaleTier": "CUSTOM", "masterType": "n1-standard-8",
            "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 2}},
            "runtimeVersion": "2.11", "pythonVersion": "3.7", "pythonModule": "trainer.task",
            "packageUris": ["gs://upgrade-staging/trainers/example_trainer-0.1.tar.gz"]}}
        removed = {"trainingInput": {
            "scaleTier": "BASIC", "runtimeVersion": "2.11", "pythonVersion": "3.7", "pythonModule": "trainer.task",
            "packageUris": ["gs://upgrade-staging/trainers/example_trainer-0.1.tar.gz"],
            "args": ["--model_dir=${jobDir}"]}}
    return offline_config("upgrade", {"kept": kept, "removed": removed}, backend=backend, labels={"env": "upgrade"},
                          tpuAccess={"grant": False})


def release_tree(RELEASE: str, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: N803 - a commit
    """A release's tree, from this clone's history (`git archive`); a missing commit fails under CI."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", RELEASE],
                                 capture_output=True, timeout=120)
        problem = archive.stderr.decode(errors="replace").strip() if archive.returncode else None
    except FileNotFoundError:
        problem = "git is not installed"
    if problem is not None:
        why = (f"the release commit {RELEASE} cannot be read from {ROOT} ({problem}); the upgrade test starts "
               "from it: clone main in full (no --depth), as CI does")
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    tree = tmp_path_factory.mktemp("release")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def beside_engine(pulumi: str, name: str) -> str | None:
    """A plugin or language host `name` in the folder of the engine `pulumi` (where scripts/install-pulumi-engine.sh
    links them), else on PATH, else None."""
    beside = Path(pulumi).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def find_pulumi() -> str | None:
    found = shutil.which("pulumi")
    if found:
        return found
    built = sorted(ENGINE_CACHE.glob("v*/bin/pulumi"))
    return str(built[-1]) if built else None


def require_pulumi(missing: str | None = None) -> str:
    """The pulumi CLI for a module of e2e tests; without it (or with `missing`, another thing they need) the
    module fails under CI (.ci/run must provide it) and is skipped elsewhere."""
    found = find_pulumi()
    if found is None:
        missing = "no pulumi CLI on PATH or in the engine cache (scripts/install-pulumi-engine.sh)"
    if missing is None and found is not None:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"{missing}: .ci/run must install it", pytrace=False)
    # -ra (pyproject's addopts) prints the reason in the summary of every run that skips them
    pytest.skip(f"end-to-end tests not run: {missing} (CI=true fails instead)", allow_module_level=True)
    raise AssertionError("unreachable")


def project_fixture(stack: str = "local", config: dict[str, Any] | None = None, program: str | None = None, *,
                    reset: bool = False) -> Any:
    """An e2e module's `project` fixture (`project = project_fixture(...)`): the project copied once for the module
    (Project.copy: stack `stack`, its config `config`, else the repository's stack file), its `__main__.py` replaced
    by `program` when given, the emulator reset first when `reset`."""

    @pytest.fixture(scope="module", name="project")
    def project(tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> Project:
        if reset:
            emulator.control("reset", {})
        made = Project.copy(tmp_path_factory.mktemp(f"e2e-{stack}"), require_pulumi(), emulator, stack=stack,
                            config=copy.deepcopy(config))
        if program is not None:
            (made.path / "__main__.py").write_text(program)
        return made

    return project


@pytest.fixture(scope="module", name="emulator")
def process_emulator() -> Iterator[Emulator]:
    """`emulator` in an e2e module that imports this: the emulator as a separate process, for that module (it
    stands in for the in-process emulator of the other tests)."""
    running = Emulator.start()
    yield running
    running.stop()


@dataclass
class Emulator:
    """The emulator as a separate process, driven through its HTTP control endpoints."""

    url: str
    process: subprocess.Popen[str]

    @classmethod
    def start(cls) -> Emulator:
        process = subprocess.Popen([sys.executable, "-m", "components", "emulator", "--port", "0",
                                    "--phase-seconds", str(PHASE_SECONDS)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "listening on" in line, line
        return cls(line.split("listening on", 1)[1].strip(), process)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def control(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + "_emulator/" + path, data=data, method="POST" if data else "GET",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"null")

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.control("requests") if r["method"] == method]

    def jobs(self) -> dict[str, dict[str, Any]]:
        """Every job by its job id (ml v1's jobId; on Vertex AI, the id its pulumi-job label carries)."""
        return {j["job"].get("jobId") or j["job"]["labels"]["pulumi-job"]: j["job"] for j in self.control("jobs")}

    def live(self) -> dict[str, dict[str, Any]]:
        return {k: j for k, j in self.jobs().items() if j["state"] in LIVE_STATES}


@dataclass
class Project:
    """A copy of the project in a temporary folder, with its own file state backend."""

    path: Path
    env: dict[str, str]
    exe: str
    stack: str = "local"

    @classmethod
    def copy(cls, base: Path, pulumi: str, emulator: Emulator, stack: str = "local",
             config: dict[str, Any] | None = None, code: Path = ROOT) -> Project:
        """The project in base/project, stack `stack` initialised and pointed at the emulator; `config`
        replaces the stack file's config (default: the repository's stacks/Pulumi.STACK.yaml, `local` the
        Vertex AI jobs, `local-ai-platform` the legacy ones); `code`: the tree the program and components come
        from (default: this working tree)."""
        path = base / "project"
        path.mkdir()
        _copy_code(code, path)
        (path / "stacks").mkdir()
        stack_file = path / "stacks" / f"Pulumi.{stack}.yaml"
        if config is None:
            shutil.copy2(ROOT / "stacks" / f"Pulumi.{stack}.yaml", stack_file)
        else:
            stack_file.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
        (path / "venv").symlink_to(ROOT / "venv")
        (base / "state").mkdir()
        project = cls(path, engine_env(base, pulumi), pulumi, stack)
        project.pulumi("stack", "init")
        project.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", emulator.url)
        return project

    @classmethod
    def consumer(cls, base: Path, pulumi: str, emulator: Emulator, name: str, program: str,
                 stack: str = "dev") -> Project:
        """A team's own Pulumi project named `name` (its Pulumi.yaml declares nothing of ours) whose program
        (`program`, the text of its __main__.py) uses the library (`gcp_training_jobs` beside it, as an installed wheel
        would put it on the path; none of this checkout's `components`), a stack initialised and
        `gcp-training-jobs:apiEndpoint` pointed at the emulator."""
        path = base / "consumer"
        path.mkdir()
        shutil.copytree(ROOT / "gcp_training_jobs", path / "gcp_training_jobs",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (path / "venv").symlink_to(ROOT / "venv")
        (path / "Pulumi.yaml").write_text(yaml.safe_dump({"name": name, "runtime": {
            "name": "python", "options": {"virtualenv": "venv"}}}))
        (path / "__main__.py").write_text(program)
        (base / "state").mkdir()
        project = cls(path, engine_env(base, pulumi), pulumi, stack)
        project.pulumi("stack", "init")
        project.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", emulator.url)
        return project

    def switch_code(self, code: Path = ROOT) -> None:
        """Replace the program and components with those of `code` (an upgrade), keeping stacks and state."""
        for name in PROJECT_FILES:
            target = self.path / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        _copy_code(code, self.path)

    def command(self, *args: str) -> list[str]:
        return [self.exe, *args, "--stack", self.stack, "--non-interactive"]

    def pulumi(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(self.command(*args), cwd=self.path, env=self.env, capture_output=True, text=True,
                              timeout=300)
        if ok and done.returncode != 0:
            raise AssertionError(f"pulumi {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def components(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`python -m components ARGV` in the project's copy, as a user runs it there."""
        return subprocess.run([str(ROOT / "venv" / "bin" / "python"), "-m", "components", *argv], cwd=self.path,
                              env=self.env, capture_output=True, text=True, timeout=300)

    def up(self) -> subprocess.CompletedProcess[str]:
        return self.pulumi("up", "--yes", "--skip-preview")

    def outputs(self) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "output", "--json", "--show-secrets").stdout)

    def state(self) -> str:
        return self.pulumi("stack", "export").stdout

    def deployment(self) -> dict[str, Any]:
        deployment: dict[str, Any] = json.loads(self.state())["deployment"]
        return deployment

    def resources(self, type_suffix: str = "TrainingJob") -> list[dict[str, Any]]:
        return [r for r in self.deployment().get("resources", []) if r["type"].endswith(type_suffix)]

    def edit_config(self, change: Any) -> None:
        """Change the stack file's config in place (the stack file a user would edit)."""
        path = self.path / "stacks" / f"Pulumi.{self.stack}.yaml"
        data = yaml.safe_load(path.read_text())
        change(data["config"])
        path.write_text(yaml.safe_dump(data, sort_keys=False))

    def edit_job(self, name: str, change: Any) -> None:
        """Change one job of the stack file in place."""
        self.edit_config(lambda config: change(config["gcp-training-jobs:jobs"][name]))


def engine_env(base: Path, pulumi: str) -> dict[str, str]:
    """The environment of the Pulumi CLI for a project under `base`: its own homes and file state backend."""
    return {
        "PATH": f"{Path(pulumi).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(base / "home"),
        "PULUMI_HOME": str(base / "pulumi-home"),
        "PULUMI_BACKEND_URL": f"file://{base / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "e2e-passphrase",
        "PULUMI_SKIP_UPDATE_CHECK": "1",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
        "PULUMI_PYTHON_CMD": str(ROOT / "venv" / "bin" / "python"),
        "GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": "0.01",
    }


def _copy_code(code: Path, path: Path) -> None:
    """The project's files (PROJECT_FILES) from the tree `code` into `path`; a name `code` lacks is left out."""
    for name in PROJECT_FILES:
        source = code / name
        if not source.exists():
            continue
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__", ".build"))
        else:
            shutil.copy2(source, path / name)


def session_processes(session: int) -> list[tuple[int, str, str]]:
    """The processes of a session, as (pid, command, state) read from /proc (state "Z": a zombie, which runs
    nothing)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        command, rest = stat.split(" (", 1)[1].rsplit(")", 1)
        fields = rest.split()
        if int(fields[3]) == session:  # fields after the command: state, ppid, pgrp, session
            found.append((int(entry.name), command, fields[0]))
    return found


def kill_session(leader: subprocess.Popen[str]) -> list[int]:
    """SIGKILL every process of the session `leader` started (the CLI, its language host, the program and the
    dynamic provider: what a lost CI runner loses), by process id; the ids killed."""
    members = [pid for pid, _, _ in session_processes(os.getsid(leader.pid))]
    for pid in members:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(pid, signal.SIGKILL)
    leader.wait(timeout=30)
    return members


def wait_until(condition: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds}s")
        time.sleep(0.1)
