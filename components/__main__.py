"""Command line: validate | render | plan | emulator (see README and DESIGN.md's public contracts).

validate and render import neither pulumi nor googleapiclient, so they start in a fraction of a second
in a pull-request check. Exit codes: 0 valid, 1 invalid input (one problem a line), 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from components.documents import Document, UnreadableError, expand, load
from components.problems import Problem, SpecError

DEFAULT_REGION = "us-central1"
BACKENDS = ("ai-platform", "vertex")

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


#: gcloud ai-platform jobs submit training flags that fill (and, as in gcloud, override) a config.yaml.
GCLOUD_FLAGS = {
    "runtime_version": "runtimeVersion",
    "python_version": "pythonVersion",
    "module_name": "pythonModule",
    "package_uris": "packageUris",
    "job_dir": "jobDir",
    "scale_tier": "scaleTier",
}


def _with_flags(data: Any, args: argparse.Namespace) -> Any:
    """The job as gcloud would submit it: flags given on the command line win over the file."""
    if not isinstance(data, dict) or not isinstance(data.get("trainingInput"), dict):
        return data
    ti = dict(data["trainingInput"])
    for flag, field in GCLOUD_FLAGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            ti[field] = value.split(",") if field == "packageUris" else value
    if args.region_flag is not None:
        ti["region"] = args.region_flag
    return {**data, "trainingInput": ti}


def _load_config(doc: Document, args: argparse.Namespace) -> Any:
    from components.spec import load_job

    return load_job(_with_flags(doc.data, args), default_region=args.region, partial=True)


def _job_problems(doc: Document, args: argparse.Namespace) -> list[Problem]:
    from components.backends import render_body

    try:
        job = _load_config(doc, args)
        if args.backend == "vertex":
            render_body(job, "vertex", "validate")
    except SpecError as error:
        return [p.within(file=str(doc.path)) for p in error.problems]
    return []


def _stack_problems(doc: Document) -> list[Problem]:
    from components.settings import load_stack_file

    try:
        load_stack_file(doc.path, data=doc.data)
    except SpecError as error:
        return [p.within(file=str(doc.path)) for p in error.problems]
    return []


def cmd_validate(args: argparse.Namespace) -> int:
    invalid = unreadable = False
    files = list(expand(args.paths))
    if not files:
        print(f"no YAML files found in {', '.join(args.paths)}", file=sys.stderr)
        return EXIT_UNREADABLE
    for path in files:
        try:
            doc = load(path)
        except UnreadableError as error:
            print(error, file=sys.stderr)
            unreadable = True
            continue
        problems = _stack_problems(doc) if doc.kind == "stack" else _job_problems(doc, args)
        for problem in problems:
            print(problem)
        if problems:
            invalid = True
        elif not args.quiet:
            print(f"{path}: ok ({doc.kind})")
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_INVALID if invalid else EXIT_OK


def job_id_from(path: Path) -> str:
    """A valid jobId from a file name: config.yaml -> config, 2-gpu.yaml -> job_2_gpu."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", path.stem)[:128]
    return stem if stem[:1].isalpha() else f"job_{stem}"[:128]


def cmd_render(args: argparse.Namespace) -> int:
    from components.backends import render_body

    path = Path(args.path)
    try:
        doc = load(path)
    except UnreadableError as error:
        print(error, file=sys.stderr)
        return EXIT_UNREADABLE
    if doc.kind != "job":
        print(f"{path}: a stack file; render takes a job config (a Job with trainingInput). "
              f"Use `python -m components plan --stack {doc.stack_name or 'NAME'}` for stacks.",
              file=sys.stderr)
        return EXIT_UNREADABLE
    data: Any = doc.data
    job_id = args.job_id or (data.get("jobId") if isinstance(data, dict) else None) or job_id_from(path)
    if isinstance(data, dict):
        data = {**data, "jobId": job_id}
    try:
        job = _load_config(Document(path, "job", data), args)
        body = render_body(job, args.backend, job_id)
    except SpecError as error:
        for problem in error.problems:
            print(problem.within(file=str(path)))
        return EXIT_INVALID
    json.dump(body, sys.stdout, indent=2, sort_keys=False)
    print()
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from components.plan import run_plan

    try:
        return run_plan(args.stack, Path(args.stacks_dir), as_json=args.json)
    finally:
        _close_event_loop()


def _close_event_loop() -> None:
    """Close the loops Pulumi's runtime left open: collected at interpreter exit instead, they can fail
    noisily (an "Exception ignored" traceback on stderr) once their selectors' file descriptors are gone."""
    import asyncio
    import gc

    for obj in gc.get_objects():
        if isinstance(obj, asyncio.AbstractEventLoop) and not obj.is_running() and not obj.is_closed():
            obj.close()


def cmd_emulator(args: argparse.Namespace) -> int:
    from components.emulator import main as emulator_main

    forwarded = ["--port", str(args.port), "--phase-seconds", str(args.phase_seconds)]
    if args.verbose:
        forwarded.append("--verbose")
    emulator_main(forwarded)
    return EXIT_OK


def _gcloud_flags(p: argparse.ArgumentParser) -> None:
    """The gcloud submit flags a config.yaml is completed with (they win over the file, as in gcloud)."""
    p.add_argument("--region", dest="region_flag", metavar="REGION",
                   help=f"trainingInput.region (a file without one gets {DEFAULT_REGION})")
    p.add_argument("--runtime-version")
    p.add_argument("--python-version")
    p.add_argument("--module-name", help="trainingInput.pythonModule")
    p.add_argument("--package-uris", help="comma-separated gs:// URIs (trainingInput.packageUris)")
    p.add_argument("--job-dir")
    p.add_argument("--scale-tier")
    p.set_defaults(region=DEFAULT_REGION)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m components", description=__doc__.splitlines()[0])
    sub = top.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="judge job configs and stack files (files or folders)")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("--backend", choices=BACKENDS, default="ai-platform",
                   help="also judge job configs against this backend's limits (stack files name their own)")
    _gcloud_flags(v)
    v.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("render", help="print the request body a backend would send")
    r.add_argument("path", metavar="PATH")
    r.add_argument("--backend", choices=BACKENDS, default="ai-platform")
    r.add_argument("--job-id", help="jobId (default: the file's jobId, else its name)")
    _gcloud_flags(r)
    r.set_defaults(func=cmd_render)

    p = sub.add_parser("plan", help="run __main__.py offline under Pulumi's mocks and print the plan")
    p.add_argument("--stack", required=True)
    p.add_argument("--stacks-dir", default="stacks")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=cmd_plan)

    e = sub.add_parser("emulator", help="serve the emulated Google APIs on 127.0.0.1")
    e.add_argument("--port", type=int, default=8085)
    e.add_argument("--phase-seconds", type=float, default=2.0,
                   help="how long a job stays in each state (QUEUED, PREPARING, RUNNING)")
    e.add_argument("--verbose", action="store_true")
    e.set_defaults(func=cmd_emulator)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
