"""Benchmark: `pulumi up` of N jobs of the provider package (`gcp-training-jobs:index:TrainingJob`) against the
loopback emulator, and two floors.

The figure is a Python program declaring N jobs with the package's resource (`pulumi.CustomResource(TYPE, NAME,
{"project", "region", "jobSpec"})`, up_bench's job spec each), the stack's `gcp-training-jobs:apiEndpoint` the
emulator's, the plugin the engine starts being the executable form (provider/bin/pulumi-resource-gcp-training-jobs,
found on PATH: docs/provider-package.md). A Python program rather than a Pulumi YAML one, although the YAML host is
built beside the engine: the floors are Python programs under the same Python language host, so what differs between
the figure and a floor is the provider alone.

The floors, each `up` of N resources whose create returns at once:
- the dynamic floor: up_bench's N no-op Python dynamic resources (what any dynamic resource pays);
- the no-op plugin floor: N resources of a provider plugin written with the same SDK as the package's
  (`pulumi.provider.experimental`, served by `main(argv, version, provider)`), started the same way (an executable
  `pulumi-resource-NAME` on PATH) and declared the same way (`pulumi.CustomResource`), with no inputs: what any
  Python provider plugin pays under this engine.

Prints each `up`'s whole-process wall time (best of --repeat; each on a new stack, the package's against a new
emulator, the three alternated so a drift of the machine's speed hits all), the ratios package / dynamic floor (the
hold: at most 2.3x) and package / no-op plugin floor, the processor seconds, the API requests per job (the emulator's
request log) and how many times each plugin's process started during an `up --skip-preview` (the bar: once per
deploy; the stack's init and removal around it start none), counted by a wrapper of the same name earlier on PATH that
notes each start and execs the real executable.

--profile DIR: also run the package's `up` once more with its plugin under cProfile (a profile per process started,
DIR/plugin-PID.prof, written when the engine ends the plugin), and print the time of its start, checks, quota checks,
creates and API calls, then its top functions.
Not a test: figures only. Needs the engine (`pulumi` on PATH or scripts/install-pulumi-engine.sh's cache).
Run: venv/bin/python benchmarks/package_bench.py [--jobs N] [--repeat R] [--profile DIR]
"""

from __future__ import annotations

import argparse
import json
import pstats
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as `python benchmarks/package_bench.py` from a checkout: the library is beside

from benchmarks.up_bench import (  # noqa: E402
    Timing,
    emulator,
    engine_env,
    job,
    project,
    pulumi_cli,
    requests_made,
    timed_up,
)
from gcp_training_jobs.jobspec.core.names import NAMESPACE, PACKAGE_JOB_TYPE  # noqa: E402

#: The package's executable (the plugin's executable form) and the name the engine looks for on PATH.
EXECUTABLE = ROOT / "provider" / "bin" / f"pulumi-resource-{NAMESPACE}"
#: The no-op plugin's package name and its resource's type token.
NOOP_PACKAGE = "benchnoop"
NOOP_TYPE = f"{NOOP_PACKAGE}:index:Noop"

PROGRAM = '''\
"""N resources of one type, each with its inputs as resources.json holds them."""
import json
from pathlib import Path

import pulumi

for name, inputs in json.loads(Path("resources.json").read_text()).items():
    pulumi.CustomResource({type!r}, name, inputs)
'''
NOOP_PLUGIN = '''\
"""A provider plugin whose create returns at once, served as the package's is: the floor of any Python provider
plugin written with pulumi.provider.experimental."""
import sys

from pulumi.provider.experimental.provider import CreateRequest, CreateResponse, Provider
from pulumi.provider.experimental.server import main


class Noop(Provider):
    async def create(self, request: CreateRequest) -> CreateResponse:
        return CreateResponse(f"noop-{request.name}", {})


main(sys.argv[1:], "0.0.1", Noop())
'''
#: The package's plugin under cProfile: every thread's calls (the provider's methods run in worker threads, which
#: `python -m cProfile` would not see), written when the engine ends the plugin (SIGINT, then SIGKILL a moment later:
#: the profile is written in the signal's handler, then the process exits at once).
PROFILER = '''\
import cProfile
import os
import pstats
import runpy
import signal
import sys
import threading

out, script = sys.argv[1], sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
profiles = [cProfile.Profile()]
thread_run = threading.Thread.run


def run(self):
    mine = cProfile.Profile()
    profiles.append(mine)
    mine.enable()
    try:
        thread_run(self)
    finally:
        mine.disable()


def dump(signum, frame):
    stats = pstats.Stats(profiles[0])
    for other in profiles[1:]:
        stats.add(other)
    stats.dump_stats(out)
    os._exit(0)


threading.Thread.run = run
signal.signal(signal.SIGINT, dump)
signal.signal(signal.SIGTERM, dump)
profiles[0].enable()
runpy.run_path(script, run_name="__main__")
'''
#: The wrapper earlier on PATH: one line a start in STARTS, then the real plugin, run as the engine asked (under
#: PROFILER when $BENCH_PROFILE_DIR is set, for the package: its executable's own __main__.py).
WRAPPER = '''\
#!/bin/sh
echo "$$ $*" >> {starts}
if [ -n "$BENCH_PROFILE_DIR" ] && [ -n "{profiled}" ]; then
  exec "$PULUMI_PYTHON_CMD" {profiler} "$BENCH_PROFILE_DIR/plugin-$$.prof" {profiled} "$@"
fi
exec {real} "$@"
'''


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def plugins(base: Path) -> Path:
    """A folder for PATH holding the two counting wrappers (the package's, the no-op plugin's; each notes its starts
    in base/starts-PACKAGE.log), the no-op plugin itself in a folder beside."""
    wrappers, noop = base / "wrappers", base / "noop-plugin"
    wrappers.mkdir()
    noop.mkdir()
    (noop / "noop_plugin.py").write_text(NOOP_PLUGIN)
    (base / "profiler.py").write_text(PROFILER)
    real_noop = executable(noop / f"pulumi-resource-{NOOP_PACKAGE}",
                           f'#!/bin/sh\nexec "$PULUMI_PYTHON_CMD" {noop / "noop_plugin.py"} "$@"\n')
    for package, real, profiled in ((NAMESPACE, EXECUTABLE, ROOT / "provider" / "__main__.py"),
                                    (NOOP_PACKAGE, real_noop, "")):
        executable(wrappers / f"pulumi-resource-{package}",
                   WRAPPER.format(starts=base / f"starts-{package}.log", real=real, profiled=profiled,
                                  profiler=base / "profiler.py"))
    return wrappers


def resource_project(base: Path, name: str, type_token: str, resources: dict[str, dict[str, object]]) -> Path:
    """A Python project declaring `resources` (name: inputs) of `type_token` with pulumi.CustomResource."""
    path = base / name
    path.mkdir()
    (path / "venv").symlink_to(ROOT / "venv")
    (path / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n")
    (path / "__main__.py").write_text(PROGRAM.format(type=type_token))
    (path / "resources.json").write_text(json.dumps(resources))
    return path


def package_jobs(count: int) -> dict[str, dict[str, object]]:
    """N jobs as the package's resource takes them: the project, the region and up_bench's job spec each."""
    return {f"job-{i:03d}": {"project": "bench-proj", "region": "us-central1", **job(i)} for i in range(count)}


def starts(folder: Path, package: str) -> int:
    """How many times the wrapper of `package`'s plugin has started it so far (a line each in its own file)."""
    noted = folder / f"starts-{package}.log"
    return len(noted.read_text().splitlines()) if noted.exists() else 0


def package_up(path: Path, env: dict[str, str], stack: str, cli: str) -> tuple[Timing, Counter[str]]:
    """One `up` of the package's jobs on a new stack against a new emulator: its timing and the requests made."""
    with emulator() as endpoint:
        (path / f"Pulumi.{stack}.yaml").write_text(json.dumps({"config": {f"{NAMESPACE}:apiEndpoint": endpoint}}))
        timing = timed_up(path, env, stack, cli)
        return timing, requests_made(endpoint)


#: What the profile's summary names: (what, the function's file (its path's end), its name).
MARKS = (
    ("the plugin's whole run (its start to the engine's end of it)", "provider/__main__.py", "<module>"),
    ("serving (the gRPC server, from its start to the end)", "provider/experimental/server.py", "main"),
    ("configure", "resources/package/provider.py", "configure"),
    ("TrainingJobProvider.check", "training_job/provider.py", "check"),
    ("of which the quota check", "training_job/quota.py", "check"),
    ("TrainingJobProvider.create", "training_job/provider.py", "create"),
    ("the API calls (transport.call)", "backends/transport.py", "call"),
)


def cumulative(stats: pstats.Stats, path_end: str, name: str) -> tuple[int, float]:
    """The calls of the functions `name` of a file whose path ends in `path_end`, and their cumulative seconds."""
    found = [(nc, ct) for (file, _, func), (_, nc, _, ct, _) in getattr(stats, "stats", {}).items()
             if file.endswith(path_end) and func == name]
    return sum(n for n, _ in found), sum(t for _, t in found)


def print_profile(folder: Path, count: int) -> None:
    """The plugin's profiles (one per process started) merged: the marked functions' time, then the top functions by
    cumulative time. Seconds are wall seconds of each thread, summed over the threads (worker threads run at once)."""
    found = sorted(folder.glob("plugin-*.prof"))
    if not found:
        print(f"no profile written in {folder} (the engine ended the plugin before it could write)")
        return
    print(f"the package's plugin under cProfile, `up` of {count} jobs: {len(found)} process(es); seconds summed over "
          "threads")
    stats = pstats.Stats(*(str(p) for p in found))
    whole, serving = cumulative(stats, *MARKS[0][1:])[1], cumulative(stats, *MARKS[1][1:])[1]
    print(f"  the plugin's start until it serves (imports): {whole - serving:.2f} s")
    for what, path_end, name in MARKS:
        calls, seconds = cumulative(stats, path_end, name)
        print(f"  {what}: {seconds:.2f} s in {calls} call(s)")
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also profile the package's plugin in one more `up`")
    options = parser.parse_args()
    cli = pulumi_cli()
    # Byte-compiled before the runs, as an installed package is: the plugin imports the library from this checkout.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gcp_training_jobs")], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "state").mkdir()
        wrappers = plugins(base)
        env = engine_env(base, cli)
        env["PATH"] = f"{wrappers}:{EXECUTABLE.parent}:{env['PATH']}"  # the wrappers first, then provider/bin
        dynamic = project(base, "noop", options.jobs)
        noop = resource_project(base, "noop-plugin-floor", NOOP_TYPE, {f"noop-{i}": {} for i in range(options.jobs)})
        package = resource_project(base, "package-jobs", PACKAGE_JOB_TYPE, package_jobs(options.jobs))
        floors: list[Timing] = []
        noops: list[Timing] = []
        figures: list[Timing] = []
        made: list[Counter[str]] = []
        package_starts: list[int] = []
        noop_starts: list[int] = []
        for i in range(options.repeat):  # alternated, so a drift of the machine's speed hits all three
            floors.append(timed_up(dynamic, env, f"floor{i}", cli))
            before = starts(base, NOOP_PACKAGE)
            noops.append(timed_up(noop, env, f"noop{i}", cli))
            noop_starts.append(starts(base, NOOP_PACKAGE) - before)
            before = starts(base, NAMESPACE)
            timing, requests = package_up(package, env, f"bench{i}", cli)
            package_starts.append(starts(base, NAMESPACE) - before)
            figures.append(timing)
            made.append(requests)
        if options.profile is not None:
            options.profile.mkdir(parents=True, exist_ok=True)
            profile = options.profile.resolve()
            for old in profile.glob("plugin-*.prof"):
                old.unlink()
            package_up(package, {**env, "BENCH_PROFILE_DIR": str(profile)}, "profiled", cli)
    report(options.jobs, options.repeat, floors, noops, figures, made, package_starts, noop_starts)
    if options.profile is not None:
        print_profile(options.profile.resolve(), options.jobs)


def report(jobs: int, repeat: int, floors: list[Timing], noops: list[Timing], figures: list[Timing],
           made: list[Counter[str]], package_starts: list[int], noop_starts: list[int]) -> None:
    def runs(times: list[Timing]) -> str:
        return f"best of {repeat}: {', '.join(f'{t.wall:.2f}' for t in times)}"

    floor, noop, figure = (min(t.wall for t in times) for times in (floors, noops, figures))
    print(f"dynamic floor: `pulumi up` of {jobs} no-op dynamic resources: {floor:.2f} s ({runs(floors)})")
    print(f"no-op plugin floor: `pulumi up` of {jobs} resources of a no-op provider plugin: {noop:.2f} s "
          f"({runs(noops)}), {noop / floor:.2f}x the dynamic floor")
    print(f"package: `pulumi up` of {jobs} {PACKAGE_JOB_TYPE} against the emulator: {figure:.2f} s ({runs(figures)})")
    print(f"ratio to the dynamic floor: {figure / floor:.2f}x (the hold: at most 2.3x); each run's: "
          f"{', '.join(f'{f.wall / n.wall:.2f}x' for f, n in zip(figures, floors, strict=True))}")
    print(f"ratio to the no-op plugin floor: {figure / noop:.2f}x; each run's: "
          f"{', '.join(f'{f.wall / n.wall:.2f}x' for f, n in zip(figures, noops, strict=True))}")
    cpu = [min(t.cpu for t in times) for times in (floors, noops, figures)]
    print(f"processor seconds (best of {repeat}): dynamic floor {cpu[0]:.2f}, no-op plugin floor {cpu[1]:.2f} "
          f"({cpu[1] / cpu[0]:.2f}x), package {cpu[2]:.2f} ({cpu[2] / cpu[0]:.2f}x the dynamic floor, "
          f"{cpu[2] / cpu[1]:.2f}x the no-op plugin floor)")
    most = max(made, key=lambda c: sum(c.values()))
    print(f"requests per job: {sum(most.values()) / jobs:.2f} (the most of {repeat} runs: {sum(most.values())} for "
          f"{jobs} jobs: {', '.join(f'{m} {n}' for m, n in sorted(most.items()))})")
    print(f"plugin processes started per `up` (the bar: once per deploy): the package's {package_starts}, the no-op "
          f"plugin's {noop_starts}")


if __name__ == "__main__":
    main()
