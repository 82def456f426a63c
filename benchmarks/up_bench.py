"""Benchmark: `pulumi up` of N training jobs against the loopback emulator, and its floor.

The floor is the same engine, language host and dynamic-provider plugin doing `pulumi up` of N no-op
dynamic resources (a provider whose create returns at once): what any Python dynamic resource pays. The
figure is N TrainingJobs of the project (a stack file of N Vertex AI CustomJobSpec jobs, on Spot, with a
container, against the emulator: every job checked, judged, priced, created and labelled), run as a user
runs it. Prints each `up`'s whole-process wall time (best of --repeat, each on a new stack and a new emulator)
and the ratio to the floor measured in the same run (target: at most 1.5x), and the API requests the `up` made per
job, as the emulator's request log counts them (target: at most 2.05: a job's lookup and create, and the quota
limits and the region's live jobs read once per run).

A third figure, the state floor, is what the engine alone pays for a state of N jobs: N no-op dynamic resources
each registering one job's own inputs and returning its outputs (the first TrainingJob's, read from the jobs stack's
exported state; their pickled provider a secret or not, as the jobs' is), in a stack with the same stack file (the
engine copies the whole stack config into a Python dynamic provider's state). Built from one job, not from the
project's state replayed, it is what a state that grows with the stack, not its square, costs: the figure's ratio to
it is the project's own cost, and its ratio to the floor the engine's cost of a job's state. The state's bytes per job
are printed too (the exported state's resources over N: it does not grow with N).

--preview also times, on the jobs stack, `pulumi preview` of N jobs (a new stack: every job checked), and the
project's offline `plan` of the same stack file.

--job-resource package: the stack file sets `gcp-training-jobs:jobResource: package`, so the jobs are the provider
package's resource (its executable plugin, provider/bin, on PATH; one explicit provider configured with the stack's
config); the floors are the same.
Not a test: figures only. Needs the engine (`pulumi` on PATH or scripts/install-pulumi-engine.sh's cache).
Run: python benchmarks/up_bench.py [--jobs N] [--repeat R]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as `python benchmarks/up_bench.py` from a checkout: the library is beside

from gcp_training_jobs.jobspec.core.names import JOB_TYPES  # noqa: E402

CACHE = Path(os.environ.get("PULUMI_ENGINE_CACHE", Path.home() / ".cache/gcp-training-jobs/pulumi-engine"))

NOOP_PROGRAM = '''\
from noop import Noop

for i in range({count}):
    Noop(f"noop-{{i}}")
'''
NOOP_PROVIDER = '''\
"""A dynamic resource whose create returns at once: the floor of any Python dynamic resource."""
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class NoopProvider(ResourceProvider):
    def create(self, props):
        return CreateResult("noop", {})


class Noop(Resource):
    def __init__(self, name):
        super().__init__(NoopProvider(), name, {})
'''


STATE_PROGRAM = '''\
import json
from pathlib import Path

from echo import Echo

one = json.loads(Path("resource.json").read_text())
for i in range({count}):
    Echo(f"job-{{i:03d}}", one["inputs"])
'''
STATE_PROVIDER = '''\
"""A dynamic resource that does no work and returns a TrainingJob's recorded outputs: the engine's cost of the
project's state, with nothing of the project's program or provider."""
import functools
import json
from pathlib import Path

from pulumi.dynamic import CreateResult, Resource, ResourceProvider


@functools.cache
def recorded() -> dict:
    return json.loads(Path("resource.json").read_text())


class EchoProvider(ResourceProvider):
    serialize_as_secret_always = {secret}  # as the TrainingJobs' pickled provider is kept in their state

    def create(self, props):
        outputs = recorded()["outputs"]
        return CreateResult(f"{{outputs.get('resourceName')}}-{{props['echoName']}}", outputs)


class Echo(Resource):
    def __init__(self, name, inputs):
        super().__init__(EchoProvider(), name, {{**inputs, "echoName": name}})
'''
#: The type of the project's jobs in exported state, and the key of a dynamic resource's pickled provider.
PROVIDER_KEY = "__provider"


def pulumi_cli() -> str:
    found = shutil.which("pulumi") or next((str(p) for p in sorted(CACHE.glob("v*/bin/pulumi"))[-1:]), None)
    if found is None:
        sys.exit("no pulumi CLI on PATH or in the engine cache: run scripts/install-pulumi-engine.sh")
    return found


def engine_env(base: Path, cli: str) -> dict[str, str]:
    """The environment of the `pulumi` runs under `base`: its own homes and file state backend, no plugin fetched,
    the programs' and plugins' Python this checkout's venv."""
    return {"PATH": f"{Path(cli).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(base / "home"), "PULUMI_HOME": str(base / "pulumi-home"),
            "PULUMI_BACKEND_URL": f"file://{base / 'state'}", "PULUMI_CONFIG_PASSPHRASE": "bench",
            "PULUMI_SKIP_UPDATE_CHECK": "1", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
            "PULUMI_PYTHON_CMD": str(ROOT / "venv" / "bin" / "python")}


def job(index: int) -> dict[str, object]:
    """One Spot L4 job, small: the engine hands the program the stack's config in one environment variable (the
    `jobs` map as escaped JSON text inside JSON), which Linux caps at 128 KiB (MAX_ARG_STRLEN), so 400 jobs must
    stay under about 300 bytes each, escapes included. `index` makes each job's spec its own."""
    return {"jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                             "acceleratorCount": 1},
                             "replicaCount": 1,
                             "containerSpec": {"imageUri": f"us-docker.pkg.dev/p/t/l4:{index}"}}],
        "scheduling": {"strategy": "SPOT"}}}


def project(base: Path, name: str, count: int) -> Path:
    """A project folder: `noop` (the floor) or `jobs` (this project's program with N jobs; its stack file is
    written per run, by stack_file)."""
    path = base / name
    path.mkdir()
    (path / "venv").symlink_to(ROOT / "venv")
    if name == "noop":
        (path / "Pulumi.yaml").write_text("name: floor\nruntime: python\n")
        (path / "__main__.py").write_text(NOOP_PROGRAM.format(count=count))
        (path / "noop.py").write_text(NOOP_PROVIDER)
        return path
    for item in ("Pulumi.yaml", "__main__.py", "components", "gcp_training_jobs", "trainers"):
        source = ROOT / item
        if source.is_dir():
            shutil.copytree(source, path / item, ignore=shutil.ignore_patterns("__pycache__", ".build"))
        else:
            shutil.copy2(source, path / item)
    (path / "stacks").mkdir()
    # Byte-compiled before the runs, as an installed package is: the first run would otherwise pay for it.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "gcp_training_jobs")], check=True,
                   capture_output=True)
    return path


def stack_file(path: Path, stack: str, count: int, endpoint: str, job_resource: str = "dynamic") -> None:
    """The stack file of N Vertex AI jobs against the emulator at `endpoint`, its jobs `job_resource`'s."""
    config = {
        "gcp:project": "bench-proj", "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:region": "us-central1", "gcp-training-jobs:apiEndpoint": endpoint,
        "gcp-training-jobs:enableApis": False, "gcp-training-jobs:jobResource": job_resource,
        "gcp-training-jobs:buckets": {"staging": "bench-staging", "jobDir": "bench-job-dir"},
        "gcp-training-jobs:jobs": {f"job-{i:03d}": job(i) for i in range(count)},
    }
    (path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))


@contextlib.contextmanager
def emulator() -> Iterator[str]:
    """A new emulator (no job from an earlier run to adopt: every run creates its 100 jobs), its endpoint."""
    process = subprocess.Popen([sys.executable, "-m", "components", "emulator", "--port", "0"], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().split("listening on", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def requests_made(endpoint: str) -> Counter[str]:
    """The emulator's request log, by API method (control endpoints are not logged)."""
    with urllib.request.urlopen(f"{endpoint.rstrip('/')}/_emulator/requests", timeout=30) as answer:
        return Counter(str(r["method"]) for r in json.loads(answer.read()))


class Timing(NamedTuple):
    """An `up`'s wall seconds, and the processor seconds (user + system) of the engine and every process it waited
    for (language host, program, providers): less bent than wall time by the machine's other load."""

    wall: float
    cpu: float


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_up(path: Path, env: dict[str, str], stack: str, cli: str, export: Path | None = None) -> Timing:
    """One `up` on a new stack, timed; `export`: where to write the stack's state (`pulumi stack export`)."""
    def run(*args: str) -> str:
        done = subprocess.run([cli, *args, "--stack", stack, "--non-interactive"], cwd=path, env=env,
                              capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            sys.exit(f"pulumi {' '.join(args)} failed in {path}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.stdout

    run("stack", "init")
    start, cpu = time.perf_counter(), children_cpu()
    run("up", "--yes", "--skip-preview")
    elapsed = Timing(time.perf_counter() - start, children_cpu() - cpu)
    if export is not None:
        export.write_text(run("stack", "export"))
    run("stack", "rm", "--yes", "--force", "--preserve-config")  # the stack file is the bench's own
    return elapsed


def state_project(base: Path, export: Path, stack_text: str, stacks: list[str], count: int) -> Path:
    """The state floor's project: N Echos, each of the export's first TrainingJob's inputs and outputs (without the
    pickled provider, which the Echo brings its own of), and the jobs' stack file under each stack name."""
    path = base / "state-floor"
    path.mkdir()
    (path / "venv").symlink_to(ROOT / "venv")
    (path / "Pulumi.yaml").write_text("name: state-floor\nruntime: python\n")
    (path / "__main__.py").write_text(STATE_PROGRAM.format(count=count))
    resources = json.loads(export.read_text())["deployment"]["resources"]
    secret = any(isinstance(r.get("inputs", {}).get(PROVIDER_KEY), dict) for r in resources if r["type"] in JOB_TYPES)
    (path / "echo.py").write_text(STATE_PROVIDER.format(secret=secret))
    first = next((r for r in resources if r["type"] in JOB_TYPES), None)
    if first is None:
        sys.exit("no TrainingJob in the jobs stack's state: the state floor has nothing to echo")
    (path / "resource.json").write_text(json.dumps({key: {k: v for k, v in first.get(key, {}).items()
                                                          if k != PROVIDER_KEY} for key in ("inputs", "outputs")}))
    for stack in stacks:
        (path / f"Pulumi.{stack}.yaml").write_text(stack_text)
    return path


def timed_reviews(path: Path, env: dict[str, str], cli: str, count: int) -> tuple[float, float]:
    """`pulumi preview` of N jobs on a new stack, and `python -m components plan` of its stack file: wall seconds."""
    def timed(*argv: str) -> float:
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=path, env={**env, "PATH": f"{ROOT / 'venv' / 'bin'}:{env['PATH']}"},
                              capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return time.perf_counter() - start

    with emulator() as endpoint:
        stack_file(path, "review", count, endpoint)
        subprocess.run([cli, "stack", "init", "--stack", "review", "--non-interactive"], cwd=path, env=env,
                       check=True, capture_output=True)
        preview = timed(cli, "preview", "--stack", "review", "--non-interactive")
        plan = timed(str(ROOT / "venv" / "bin" / "python"), "-m", "components", "plan", "--stack", "review")
    return preview, plan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--preview", action="store_true", help="also time `pulumi preview` and `plan` of N jobs")
    parser.add_argument("--job-resource", choices=("dynamic", "package"), default="dynamic",
                        help="the jobs' resource (gcp-training-jobs:jobResource)")
    options = parser.parse_args()
    cli = pulumi_cli()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        env = engine_env(base, cli)
        if options.job_resource == "package":  # the package's executable plugin, found on PATH
            env["PATH"] = f"{ROOT / 'provider' / 'bin'}:{env['PATH']}"
        (base / "state").mkdir()
        noop = project(base, "noop", options.jobs)
        jobs = project(base, "jobs", options.jobs)
        floors: list[Timing] = []
        figures: list[Timing] = []
        states: list[Timing] = []
        made: list[Counter[str]] = []
        export = base / "export.json"
        state: Path | None = None
        for i in range(options.repeat):  # alternated, so a drift of the machine's speed hits all three
            floors.append(timed_up(noop, env, f"floor{i}", cli))
            with emulator() as endpoint:
                stack_file(jobs, f"bench{i}", options.jobs, endpoint, options.job_resource)
                figures.append(timed_up(jobs, env, f"bench{i}", cli, export if state is None else None))
                made.append(requests_made(endpoint))
            if state is None:
                state = state_project(base, export, (jobs / "stacks" / "Pulumi.bench0.yaml").read_text(),
                                      [f"state{n}" for n in range(options.repeat)], options.jobs)
            states.append(timed_up(state, env, f"state{i}", cli))
        exported = json.loads(export.read_text())["deployment"]["resources"]
        job_bytes = sum(len(json.dumps(r)) for r in exported if r["type"] in JOB_TYPES) / options.jobs
        reviews = timed_reviews(jobs, env, cli, options.jobs) if options.preview else None
    floor, figure, state_floor = (min(t.wall for t in times) for times in (floors, figures, states))
    print(f"floor: `pulumi up` of {options.jobs} no-op dynamic resources: {floor:.2f} s (best of {options.repeat}: "
          f"{', '.join(f'{t.wall:.2f}' for t in floors)})")
    print(f"`pulumi up` of {options.jobs} TrainingJobs against the emulator: {figure:.2f} s (best of "
          f"{options.repeat}: {', '.join(f'{t.wall:.2f}' for t in figures)})")
    print(f"ratio to the floor: {figure / floor:.2f}x (target: at most 1.5x); each run's: "
          f"{', '.join(f'{f.wall / n.wall:.2f}x' for f, n in zip(figures, floors, strict=True))}")
    most = max(made, key=lambda c: sum(c.values()))
    print(f"requests per job: {sum(most.values()) / options.jobs:.2f} (target: at most 2.05; the most of "
          f"{options.repeat} runs: {sum(most.values())} for {options.jobs} jobs: "
          f"{', '.join(f'{m} {n}' for m, n in sorted(most.items()))})")
    print(f"state floor: `pulumi up` of {options.jobs} no-op resources with the TrainingJobs' inputs, outputs and "
          f"stack file: {state_floor:.2f} s (best of {options.repeat}: {', '.join(f'{t.wall:.2f}' for t in states)}), "
          f"{state_floor / floor:.2f}x the floor: the engine's cost of this state")
    print(f"ratio to the state floor: {figure / state_floor:.2f}x: the project's own program and provider")
    print(f"state bytes per job: {job_bytes:.0f} (the exported state's TrainingJobs over {options.jobs})")
    if reviews is not None:
        print(f"`pulumi preview` of {options.jobs} jobs (a new stack: each checked): {reviews[0]:.2f} s; offline "
              f"`plan` of the same stack file: {reviews[1]:.2f} s")
    cpu = [min(t.cpu for t in times) for times in (floors, figures, states)]
    print(f"processor seconds (best of {options.repeat}): floor {cpu[0]:.2f}, TrainingJobs {cpu[1]:.2f} "
          f"({cpu[1] / cpu[0]:.2f}x), state floor {cpu[2]:.2f} ({cpu[2] / cpu[0]:.2f}x)")


if __name__ == "__main__":
    main()
