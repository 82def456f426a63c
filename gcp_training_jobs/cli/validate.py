"""`validate PATH...`: judge job configs and stack files; one problem a line; exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gcp_training_jobs.cli.gcloud_flags import flag_labels, input_paths, with_flags
from gcp_training_jobs.jobspec.catalog.credentials import masked_text
from gcp_training_jobs.jobspec.core.errors import SpecError, UnreadableError
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE
from gcp_training_jobs.jobspec.core.problems import Problem, printable
from gcp_training_jobs.jobspec.io.documents import Document, expand, load_text, read_text
from gcp_training_jobs.jobspec.load import Judged, judge

#: Where a CustomJobSpec's region comes from: gcloud's flag (it is never part of the spec).
REGION_FLAG = "--region"


def region_of(args: argparse.Namespace) -> str:
    """The job's region: --region, else the default (gcloud would prompt; us-central1 here)."""
    return str(getattr(args, "region_flag", None) or args.region)


def load_file_job(doc: Document, args: argparse.Namespace, *, job_id: str | None = None,
                  partial: bool = True) -> Judged:
    """A job config, completed by gcloud's flags (with_flags) and read by the one entry point (load.judge), in
    its vocabulary: a tuning config as `gcloud ai hp-tuning-jobs create --config FILE --region R` reads it; a
    CustomJobSpec as `gcloud ai custom-jobs create --config FILE --region R` does; a trainingInput config as
    `gcloud ai-platform jobs submit training` reads it, by AI Platform's limits, or by Vertex AI's with
    --backend vertex. `partial` (validate) lets gcloud's submit-time flags (module, package, runtime) be
    missing; render passes False: it never prints a body the API would refuse for lack of them."""
    return judge(with_flags(doc.data, args), backend=args.backend, backend_at="--backend", region=region_of(args),
                 region_at=REGION_FLAG, labels=flag_labels(args), job_id=job_id, partial=partial)


def _job_problems(doc: Document, args: argparse.Namespace) -> tuple[list[Problem], list[Problem]]:
    """A job config's problems and warnings, each naming the file."""
    try:
        judged = load_file_job(doc, args)
    except SpecError as error:  # the file does not parse
        return [p.within(file=str(doc.path)) for p in error.problems], []
    file = str(doc.path)
    return [p.within(file=file) for p in judged.problems], [w.within(file=file) for w in judged.warnings]


def _stack_problems(doc: Document) -> tuple[list[Problem], list[Problem]]:
    """A stack file's problems and its jobs' warnings, each naming the file: `plan`'s verdict on its jobs, so the
    stack's guardrails (requireTimeout, spotOnly, the cost caps, ...) and the fixed job rules too, judged by the
    same function on the same rendered bodies (settings.guardrails.guardrail_problems_of). A file with mistakes:
    them and the guardrail breaks of its jobs that did judge, in one round (settings.guardrails.one_round). A price
    table that cannot be read is UnreadableError (exit 2), as in `plan`."""
    from gcp_training_jobs.resources.settings import load_stack_file  # only for stack files
    from gcp_training_jobs.resources.settings.guardrails import guardrail_problems_of, one_round

    file = str(doc.path)
    try:
        settings = load_stack_file(doc.path, data=doc.data)
    except SpecError as error:
        problems, warnings = one_round(error, file)
        return problems, list(warnings)
    broken = [p.within(file=file) for p in dict.fromkeys(guardrail_problems_of(settings))]
    return broken, [w.within(file=file) for w in settings.warnings]


@dataclass(frozen=True)
class FileReport:
    """What validate says of one file: lines for stdout, lines for stderr, and how it ended."""

    out: tuple[str, ...]
    err: tuple[str, ...] = ()
    invalid: bool = False
    unreadable: bool = False


def unreadable(error: UnreadableError) -> FileReport:
    return FileReport((), (printable(str(error)),), unreadable=True)


def judge_document(doc: Document, args: argparse.Namespace) -> FileReport:
    problems, warnings = _stack_problems(doc) if doc.kind == "stack" else _job_problems(doc, args)
    err = tuple(dict.fromkeys(w.warning() for w in warnings))  # on stderr, each once: stdout keeps one problem a line
    if problems:  # a message that echoes a value shows its credential masked
        return FileReport(tuple(masked_text(str(p)) for p in problems), err, invalid=True)
    return FileReport(() if args.quiet else (printable(f"{doc.path}: ok ({doc.kind})"),), err)


#: Below this many files one process is faster than starting workers.
PARALLEL_FROM = 200


#: Files are read a batch at a time, then judged, so that reading and judging do not in turn evict each other's
#: code and data from the CPU caches (benchmarks/validate_bench.py). A batch holds at most BATCH_FILES files and
#: BATCH_BYTES of text; a bigger file, or one with YAML aliases (its values may be many times its text), is read
#: and judged on its own, so a batch's memory stays a small multiple of BATCH_BYTES.
BATCH_FILES = 32
BATCH_BYTES = 64 * 1024


def _judge_all(paths: list[Path], args: argparse.Namespace) -> list[FileReport]:
    """Each file's report, in order, the files read a batch at a time."""
    reports: list[FileReport] = []
    batch: list[Document | FileReport] = []  # read, not yet judged (a FileReport: the file could not be read)
    size = 0
    for path in paths:
        try:
            text = read_text(path)
        except UnreadableError as error:
            batch.append(unreadable(error))
            continue
        alone = "*" in text or len(text) > BATCH_BYTES
        if alone or len(batch) == BATCH_FILES or size + len(text) > BATCH_BYTES:
            reports += _judged(batch, args)
            batch, size = [], 0
        if alone:
            reports.append(_judge_text(path, text, args))
            continue
        size += len(text)
        try:
            batch.append(load_text(path, text))
        except UnreadableError as error:
            batch.append(unreadable(error))
    return reports + _judged(batch, args)


def _judged(batch: list[Document | FileReport], args: argparse.Namespace) -> list[FileReport]:
    return [d if isinstance(d, FileReport) else _judge_read(d, args) for d in batch]


def _judge_read(doc: Document, args: argparse.Namespace) -> FileReport:
    try:
        return judge_document(doc, args)
    except UnreadableError as error:  # what a stack's review reads besides the file (a broken price table)
        return unreadable(error)


def _judge_text(path: Path, text: str, args: argparse.Namespace) -> FileReport:
    try:
        return judge_document(load_text(path, text), args)
    except UnreadableError as error:
        return unreadable(error)


def _reports(files: list[Path], args: argparse.Namespace) -> Iterator[FileReport]:
    """Each file's report, in order. With many files, one contiguous slice per core: this process judges the
    first while forked workers (nothing re-imported) judge the others."""
    workers = min(os.cpu_count() or 1, len(files) // (PARALLEL_FROM // 2))
    if workers < 2 or not hasattr(os, "fork"):
        yield from _judge_all(files, args)
        return
    size = -(-len(files) // workers)
    slices = [files[i:i + size] for i in range(0, len(files), size)]
    forked = [_fork(part, args) for part in slices[1:]]
    yield from _judge_all(slices[0], args)
    for part, (pid, pipe) in zip(slices[1:], forked, strict=True):
        yield from _collect(pid, pipe) or _judge_all(part, args)  # a worker that failed: its slice is judged here


def _fork(part: list[Path], args: argparse.Namespace) -> tuple[int, int]:
    """A forked worker judging `part`: it writes its reports (pickled) to a pipe and exits. os.fork, as one slice
    per worker needs no queue, thread or import of multiprocessing; validate runs no thread, so forking is safe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        return pid, read
    code = 1
    try:
        os.close(read)
        with os.fdopen(write, "wb") as out:
            pickle.dump(_judge_all(part, args), out)
        code = 0
    finally:
        os._exit(code)  # never the parent's exit handlers, never its buffered output


def _collect(pid: int, pipe: int) -> list[FileReport] | None:
    """A worker's reports, or None when it failed (died, or wrote no whole answer)."""
    with os.fdopen(pipe, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        reports = pickle.loads(data)
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return reports if isinstance(reports, list) else None


def cmd_validate(args: argparse.Namespace) -> int:
    invalid = unreadable = False
    paths = input_paths(args)
    if not paths:
        print("no input: give PATH... (files or folders) or --config FILE", file=sys.stderr)
        return EXIT_UNREADABLE
    files = list(expand(paths))
    if not files:
        print(f"no YAML files found in {', '.join(paths)}", file=sys.stderr)
        return EXIT_UNREADABLE
    for report in _reports(files, args):
        for line in report.out:
            print(line)
        for line in report.err:
            print(line, file=sys.stderr)
        invalid |= report.invalid
        unreadable |= report.unreadable
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_INVALID if invalid else EXIT_OK
