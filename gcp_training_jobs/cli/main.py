"""Command line: validate | render | plan | diff | emulator | prices | status | logs | spend (`gcp-training-jobs`,
or `python -m components`).

validate and render import neither pulumi nor googleapiclient, so they start in a fraction of a second
in a pull-request check. Exit codes: 0 valid, 1 invalid input (one problem a line), 2 unreadable input, 3 a bug of
this library (its traceback, then one line asking for a report).
Date rules (end of support, end of availability) judge against today, or $GCP_TRAINING_JOBS_TODAY (YYYY-MM-DD).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from gcp_training_jobs.cli.gcloud_flags import add_gcloud_flags
from gcp_training_jobs.cli.job_args import add_diff_parser
from gcp_training_jobs.cli.job_args import add_parsers as add_job_parsers
from gcp_training_jobs.cli.prices import add_parser as add_prices_parser
from gcp_training_jobs.cli.terminal import terminal_streams
from gcp_training_jobs.emulator.cli import DESCRIPTION as EMULATOR
from gcp_training_jobs.emulator.cli import add_arguments as add_emulator_arguments
from gcp_training_jobs.jobspec.core.names import BACKENDS, EXIT_INVALID, EXIT_OK
from gcp_training_jobs.jobspec.core.version import __version__


def cmd_validate(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.validate import cmd_validate as run

    gc.enable()  # paused by entry while the command's modules load
    return run(args)


def cmd_render(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.render import cmd_render as run

    gc.enable()  # paused by entry while the command's modules load
    return run(args)


def cmd_plan(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.plan.command import run_plan

    try:
        return run_plan(args.stack, Path(args.stacks_dir) if args.stacks_dir else None, as_json=args.json,
                        online=args.online)
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


def cmd_diff(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.diff.command import cmd_diff as run

    try:
        return run(args)
    finally:
        _close_event_loop()


def cmd_status(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.live.status import cmd_status as run

    return run(args)


def cmd_logs(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.live.logs import cmd_logs as run

    return run(args)


def cmd_spend(args: argparse.Namespace) -> int:
    from gcp_training_jobs.cli.live.spend import cmd_spend as run

    return run(args)


def cmd_emulator(args: argparse.Namespace) -> int:
    from gcp_training_jobs.emulator.cli import serve

    return serve(args)


def _environment_invalid() -> int | None:
    """Every GCP_TRAINING_JOBS_* variable judged once, before any work: a bad one is named on stderr, one a line,
    with what it allows (exit 1); None when all are good. The emulator plays Google and reads none of them."""
    from gcp_training_jobs.jobspec.core.env import EnvError, env_settings

    try:
        env_settings()
    except EnvError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    return None


#: The command run as a module from a checkout (components/__main__.py); the console script is named in
#: pyproject.toml's [project.scripts] (gcp-training-jobs) and called by its own name.
MODULE = "python -m components"


def program_name(argv0: str | None = None) -> str:
    """The command as it was run, for its usage line: `python -m components` (or `python -m gcp_training_jobs`) as a
    module, else the script's own name (the console script: `gcp-training-jobs`)."""
    path = Path(sys.argv[0] if argv0 is None and sys.argv else argv0 or "")
    if path.name == "__main__.py" and path.parent.name == "gcp_training_jobs":
        return "python -m gcp_training_jobs"
    return MODULE if path.name in ("", "__main__.py", "-c") else path.name


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=prog or program_name(), description=__doc__.splitlines()[0])
    top.add_argument("--version", action="version", version=f"gcp-training-jobs {__version__}")
    top.set_defaults(program=top.prog)  # the command as it was run, for what names it (diff's pull request comment)
    sub = top.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="judge job configs and stack files (files or folders)")
    v.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (or give one file as --config)")
    v.add_argument("--backend", choices=BACKENDS, default=None,
                   help="judge job configs against this backend's limits (default: the file's own vocabulary: "
                        "ai-platform for trainingInput, vertex for a CustomJobSpec; stack files name their own)")
    add_gcloud_flags(v)
    v.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("render", help="print the request body a backend would send")
    r.add_argument("path", nargs="?", metavar="PATH", help="the job config (or give it as --config)")
    r.add_argument("--backend", choices=BACKENDS, default=None,
                   help="the API whose body to print (default: the file's own vocabulary: ai-platform for "
                        "trainingInput, vertex for a CustomJobSpec)")
    r.add_argument("--job-id", help="jobId, or a CustomJob's displayName (default: the file's jobId, else its name)")
    r.add_argument("--show-secrets", action="store_true",
                   help="print a value that looks like a credential as written (default: masked, with its kind "
                        "named, as every other output shows it)")
    add_gcloud_flags(r)
    r.set_defaults(func=cmd_render)

    p = sub.add_parser("plan", help="run __main__.py offline under Pulumi's mocks and print the plan")
    p.add_argument("--stack", required=True)
    p.add_argument("--stacks-dir", default=None,
                   help="the folder of the stack files (default: Pulumi.yaml's stackConfigDir, as Pulumi finds them)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument("--online", action="store_true",
                   help="also hold the stack's jobs against the project's Vertex AI quotas, read from Google (or the "
                        "stack's apiEndpoint) with Application Default Credentials; over a limit: exit 1")
    p.set_defaults(func=cmd_plan)

    add_diff_parser(sub, diff=cmd_diff)  # a change's plans against a git ref's

    e = sub.add_parser("emulator", help="serve the emulated Google APIs on 127.0.0.1", description=EMULATOR)
    add_emulator_arguments(e)  # the emulator's own definition: every option it has
    e.set_defaults(func=cmd_emulator)

    add_prices_parser(sub)  # prices refresh
    add_job_parsers(sub, status=cmd_status, logs=cmd_logs, spend=cmd_spend)  # a stack's jobs, from the APIs
    return top


def main(argv: list[str] | None = None) -> int:
    """The console script (`gcp-training-jobs ...`): its exit status; its usage line names it as it was run."""
    sys.excepthook = internal_error
    return _run(parser().parse_args(argv))


#: The exit status of a bug of this library: an error no command catches (each catches what the library raises
#: to say what is wrong with its input, and `plan` a program's own failure, cli.plan.mocks.programs_own).
EXIT_INTERNAL = 3


def internal_error(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    """sys.excepthook of the command: an error that reached the top is a bug, said as one: Python's traceback, for
    the report, then one line naming the version, and exit 3 (Python's own 1 would read as invalid input)."""
    sys.__excepthook__(kind, error, trace)
    if not issubclass(kind, Exception):
        return
    print(f"internal error of gcp-training-jobs {__version__}: {kind.__name__}: {error}; this is a bug of "
          "gcp-training-jobs, not of your input: please report it with the traceback above", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):
            stream.flush()
    os._exit(EXIT_INTERNAL)


#: Commands that hold nothing open once they return (no thread, event loop, client or file of their own): their
#: process ends as soon as its output is flushed, skipping the interpreter's teardown (freeing every model,
#: schema and module one by one is a noticeable part of a short command; benchmarks/validate_bench.py).
ENDS_AT_ONCE = (cmd_validate, cmd_render)
#: Python's own exit status when the output cannot be flushed at exit.
EXIT_FLUSH_FAILED = 120


def entry() -> NoReturn:
    """`python -m components`: the command's exit status, at once for ENDS_AT_ONCE. Those commands read their
    files through io.documents, which turns every OSError of reading into a message: one that still escapes
    them, or their final flush, is the output failing to be written (a full disk), said in one line."""
    sys.excepthook = internal_error
    args = parser(MODULE).parse_args()
    if args.func not in ENDS_AT_ONCE:
        sys.exit(_run(args))
    # They run this library's code alone: no pydantic plugin (pydantic's PYDANTIC_DISABLE_PLUGINS) has anything to
    # see, and looking for one reads every installed package's entry points as the first model is built (2% of a
    # validate of 1,000 files, benchmarks/validate_bench.py). A value the user set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # Loading pydantic's models and the catalog makes many objects and frees few: a collection there finds nothing
    # to free (3% of the imports' work). Paused until the command's modules are loaded (cmd_validate, cmd_render).
    gc.disable()
    try:
        code = _run(args)
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader left (`validate . | head`): what it read was all it wanted
        code = EXIT_OK
    except OSError as error:
        print(f"the output could not be written: {error}", file=sys.stderr)
        code = EXIT_FLUSH_FAILED
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
    if args.func is not cmd_emulator and (code := _environment_invalid()) is not None:
        return code
    try:
        with terminal_streams():  # no control character of a value reaches the terminal (cli/terminal.py)
            return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    entry()
