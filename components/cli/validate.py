"""`validate PATH...`: judge job configs and stack files; one problem a line; exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from components.cli.gcloud_flags import flag_labels, input_paths, with_flags
from components.jobspec.core.errors import SpecError, UnreadableError
from components.jobspec.core.names import AI_PLATFORM, EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE
from components.jobspec.core.problems import Problem, printable
from components.jobspec.io.documents import Document, expand, load_text, read_text
from components.jobspec.io.vocabulary import vocabulary_of
from components.jobspec.load import Judged, judge_custom_job, judge_job, judge_tuning_job

#: Where a CustomJobSpec's region comes from: gcloud's flag (it is never part of the spec).
REGION_FLAG = "--region"


def region_of(args: argparse.Namespace) -> str:
    """The job's region: --region, else the default (gcloud would prompt; us-central1 here)."""
    return str(getattr(args, "region_flag", None) or args.region)


def load_file_job(doc: Document, args: argparse.Namespace, *, job_id: str | None = None,
                  partial: bool = True) -> Judged:
    """A job config, completed by gcloud's flags and judged in its vocabulary: a tuning config as `gcloud ai
    hp-tuning-jobs create --config FILE --region R` reads it (--region, --labels; its trials' CustomJobSpec by
    Vertex AI's catalog); a CustomJobSpec by Vertex AI's
    catalog (what `gcloud ai custom-jobs create --config FILE --region R` reads); a trainingInput config as
    `gcloud ai-platform jobs submit training` reads it, by AI Platform's limits, or by Vertex AI's with
    --backend vertex. `partial` (validate) lets gcloud's submit-time flags (module, package, runtime) be
    missing; render passes False: it never prints a body the API would refuse for lack of them."""
    vocabulary = vocabulary_of(doc.data)
    if vocabulary == "tuning":  # gcloud ai hp-tuning-jobs create --config FILE --region R
        if args.backend == AI_PLATFORM:
            raise SpecError([Problem("studySpec", "this file is a Vertex AI tuning config (studySpec, trialJobSpec), "
                                     "which runs on Vertex AI only; allowed: --backend vertex (the default for it), "
                                     "or a trainingInput config with hyperparameters for ai-platform")])
        return judge_tuning_job(doc.data, region=region_of(args), region_at=REGION_FLAG, labels=flag_labels(args),
                               job_id=job_id)
    if vocabulary == "customJobSpec":
        if args.backend == AI_PLATFORM:
            raise SpecError([Problem("workerPoolSpecs", "this file is a Vertex AI CustomJobSpec, which runs on "
                                     "Vertex AI only; allowed: --backend vertex (the default for it), or a "
                                     "trainingInput config for ai-platform")])
        data = doc.data
        if "workerPoolSpecs" not in data and "jobSpec" not in data:  # the pools may all come from --worker-pool-spec
            data = {**data, "workerPoolSpecs": []}
        return judge_custom_job(with_flags(data, args), region=region_of(args), region_at=REGION_FLAG,
                               labels=flag_labels(args), job_id=job_id)
    return judge_job(with_flags(doc.data, args), default_region=args.region, partial=partial,
                     backend=args.backend, job_id=job_id)


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
    same function on the same rendered bodies (settings.guardrails.guardrail_problems_of). A price table that
    cannot be read is UnreadableError (exit 2), as in `plan`."""
    from components.resources.settings import load_stack_file  # only for stack files
    from components.resources.settings.guardrails import guardrail_problems_of

    try:
        settings = load_stack_file(doc.path, data=doc.data)
    except SpecError as error:
        return [p.within(file=str(doc.path)) for p in error.problems], []
    file = str(doc.path)
    broken = [p.within(file=file) for p in dict.fromkeys(guardrail_problems_of(settings))]
    return broken, [w.within(file=file) for w in settings.warnings]


@dataclass(frozen=True)
class Verdict:
    """What validate says of one file: lines for stdout, lines for stderr, and how it ended."""

    out: tuple[str, ...]
    err: tuple[str, ...] = ()
    invalid: bool = False
    unreadable: bool = False


def unreadable(error: UnreadableError) -> Verdict:
    return Verdict((), (printable(str(error)),), unreadable=True)


def judge_document(doc: Document, args: argparse.Namespace) -> Verdict:
    problems, warnings = _stack_problems(doc) if doc.kind == "stack" else _job_problems(doc, args)
    err = tuple(w.warning() for w in warnings)  # on stderr: stdout keeps one problem (or ok) a line
    if problems:
        return Verdict(tuple(str(p) for p in problems), err, invalid=True)
    return Verdict(() if args.quiet else (printable(f"{doc.path}: ok ({doc.kind})"),), err)


#: Below this many files one process is faster than starting workers.
PARALLEL_FROM = 200


#: Files are read a batch at a time, then judged: reading and judging in turn evict each other's code and data
#: from the CPU caches (batches save about 13% of a 1,000-file run). A batch holds at most BATCH_FILES files and
#: BATCH_BYTES of text; a bigger file, or one with YAML aliases (its values may be many times its text), is read
#: and judged on its own, so a batch's memory stays a small multiple of BATCH_BYTES.
BATCH_FILES = 32
BATCH_BYTES = 64 * 1024


def _judge_all(paths: list[Path], args: argparse.Namespace) -> list[Verdict]:
    """Each file's verdict, in order, the files read a batch at a time."""
    verdicts: list[Verdict] = []
    batch: list[Document | Verdict] = []  # read, not yet judged (a Verdict: the file could not be read)
    size = 0
    for path in paths:
        try:
            text = read_text(path)
        except UnreadableError as error:
            batch.append(unreadable(error))
            continue
        alone = "*" in text or len(text) > BATCH_BYTES
        if alone or len(batch) == BATCH_FILES or size + len(text) > BATCH_BYTES:
            verdicts += _judged(batch, args)
            batch, size = [], 0
        if alone:
            verdicts.append(_judge_text(path, text, args))
            continue
        size += len(text)
        try:
            batch.append(load_text(path, text))
        except UnreadableError as error:
            batch.append(unreadable(error))
    return verdicts + _judged(batch, args)


def _judged(batch: list[Document | Verdict], args: argparse.Namespace) -> list[Verdict]:
    return [d if isinstance(d, Verdict) else _judge_read(d, args) for d in batch]


def _judge_read(doc: Document, args: argparse.Namespace) -> Verdict:
    try:
        return judge_document(doc, args)
    except UnreadableError as error:  # what a stack's review reads besides the file (a broken price table)
        return unreadable(error)


def _judge_text(path: Path, text: str, args: argparse.Namespace) -> Verdict:
    try:
        return judge_document(load_text(path, text), args)
    except UnreadableError as error:
        return unreadable(error)


def _verdicts(files: list[Path], args: argparse.Namespace) -> Iterator[Verdict]:
    """Each file's verdict, in order. With many files, one contiguous slice per core: this process judges the
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
    """A forked worker judging `part`: it writes its verdicts (pickled) to a pipe and exits. os.fork rather than
    a ProcessPoolExecutor: one slice per worker needs no queue, thread or import of multiprocessing (about
    15 ms, 4% of a 1,000-file run). validate runs no thread, so forking is safe."""
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


def _collect(pid: int, pipe: int) -> list[Verdict] | None:
    """A worker's verdicts, or None when it failed (died, or wrote no whole answer)."""
    with os.fdopen(pipe, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        verdicts = pickle.loads(data)
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return verdicts if isinstance(verdicts, list) else None


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
    for verdict in _verdicts(files, args):
        for line in verdict.out:
            print(line)
        for line in verdict.err:
            print(line, file=sys.stderr)
        invalid |= verdict.invalid
        unreadable |= verdict.unreadable
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_INVALID if invalid else EXIT_OK
