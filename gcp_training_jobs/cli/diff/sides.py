"""The two sides `diff` compares: a git ref, read from git's objects into a scratch folder (never checked out over
the user's tree), or the working tree; and each side's stacks planned through `plan`'s one pass.

A ref's side is the project folder as git holds it at that ref, as a checkout would have it: Pulumi.yaml (its
`stackConfigDir` and the config defaults), the program `__main__.py` and the team's own code beside it (a package the
program imports from its folder, `acme_ml/`, the files it reads), the stack files in the stacks folder (found with the
one stack-file finder, resources.settings.stack_file, in that ref's Pulumi.yaml) and the trainer folders its stack files
name (their archive's content hash is in each job's package URI, so a changed trainer replaces the job). Files keep
git's executable bit and symbolic links.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gcp_training_jobs.cli.plan.command import Planned, judge_stack, plan_stack
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.io.documents import STACK_FILE, read_yaml
from gcp_training_jobs.resources.settings.stack_file import find_project_root, stack_file, stack_names, stacks_folder
from gcp_training_jobs.resources.trainer_source import TrainerLinkError, trainer_files

#: The head's label when it is the working tree.
WORKTREE = "worktree"
#: This library's import name: a folder of that name in the project is never what the program imports (this one
#: process plans both sides with the library it runs), so it is no input of a side's plan.
LIBRARY_PACKAGE = __name__.split(".", 1)[0]
#: Python's caches, never an input of the program.
CACHES = ("__pycache__",)
CACHE_SUFFIXES = (".pyc", ".pyo")


class SideUnreadable(UnreadableError):
    """A side that cannot be read: not a git repository, an unknown ref, no Pulumi project at it."""


@dataclass
class Side:
    """One side of the diff: its label (`REF` as given, or `worktree`), its commit (None: the working tree), the
    project root plan runs in, and the stacks found in its stacks folder."""

    label: str
    commit: str | None
    root: Path
    stacks: dict[str, Path] = field(default_factory=dict)
    scratch: Path | None = None
    """The scratch folder a ref was read into (its paths are named `REF:path` in messages)."""
    folder: Path | None = None
    """The stacks folder (default: the project's own)."""
    program_digest: str | None = field(default=None, repr=False)
    """The digest of the program's files (program_files), once per side."""

    def named(self, text: str) -> str:
        """`text` with the scratch folder's paths named as `REF:path` (the user never saw that folder)."""
        return _named(text, self.scratch, self.label)


def _named(text: str, scratch: Path | None, label: str) -> str:
    if scratch is None:
        return text
    return text.replace(f"{scratch}{os.sep}", f"{label}:").replace(str(scratch), f"{label}:")


@dataclass
class Plans:
    """Each stack of a side planned, or the lines saying why it could not be."""

    planned: dict[str, Planned] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except OSError as error:
        raise SideUnreadable(f"git cannot be run: {error}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise SideUnreadable(f"git {args[0]}: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def project_root(cwd: Path) -> Path:
    """The working tree's Pulumi project (the nearest Pulumi.yaml at or above `cwd`)."""
    root = find_project_root(cwd.resolve())
    if root is None:
        raise SideUnreadable(f"{cwd}: no Pulumi.yaml here or above; allowed: run diff inside a Pulumi project")
    return root


def commit_of(root: Path, ref: str) -> str:
    """The commit a ref names (a branch, tag or commit), or SideUnreadable naming it."""
    if ref.startswith("-"):
        raise SideUnreadable(f"{ref!r} is not a git ref; allowed: a branch, tag or commit")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    except SideUnreadable:
        raise SideUnreadable(f"{ref}: no such branch, tag or commit in the git repository at {root}") from None


def worktree_side(root: Path) -> Side:
    """The working tree as it is (what `plan` reads)."""
    try:
        folder = stacks_folder(root)
    except UnreadableError as error:  # its Pulumi.yaml
        raise SideUnreadable(str(error)) from None
    here = Path.cwd()
    shown = folder.relative_to(here) if folder.is_relative_to(here) else folder  # as `plan` names its files
    return Side(WORKTREE, None, root, {name: _stack_path(shown, name) for name in stack_names(folder)}, folder=folder)


@contextmanager
def ref_side(root: Path, ref: str) -> Iterator[Side]:
    """The project as it is at `ref`, read from git's objects into a scratch folder removed afterwards."""
    try:
        top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    except SideUnreadable as error:
        raise SideUnreadable(f"{root}: not in a git repository ({error}); allowed: run diff in the project's git "
                             "checkout") from None
    commit = commit_of(root, ref)
    prefix = PurePosixPath(root.resolve().relative_to(top.resolve()).as_posix())
    scratch = Path(tempfile.mkdtemp(prefix="gcp-training-jobs-diff-"))
    try:
        tree = _Tree(top, commit, scratch)
        side_root = scratch / prefix
        tree.write([str(prefix)], folders=True)  # the project folder, the team's own code beside the program with it
        if find_project_root(side_root) != side_root:
            raise SideUnreadable(f"{ref}:{prefix / 'Pulumi.yaml'}: no such file at {ref}; allowed: a ref where the "
                                 "project has its Pulumi.yaml")
        try:
            folder = stacks_folder(side_root)
        except UnreadableError as error:  # its Pulumi.yaml
            raise SideUnreadable(_named(str(error), scratch, ref)) from None
        if not folder.resolve().is_relative_to(side_root.resolve()):  # a stackConfigDir outside the project folder
            folder_in_git = PurePosixPath(folder.relative_to(scratch).as_posix())
            tree.write([str(folder_in_git / name) for name in tree.names_in(str(folder_in_git))
                        if STACK_FILE.fullmatch(name)])
        side = Side(ref, commit, side_root, {n: _stack_path(folder, n) for n in stack_names(folder)}, scratch,
                    folder)
        yield side
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _stack_path(folder: Path, name: str) -> Path:
    path = stack_file(folder, name)
    assert path is not None  # stack_names lists only the files that are there
    return path


def _trainer_paths(file: Path) -> list[str]:
    """The trainer folders a stack file names (`jobs.NAME.trainer.path`), as written; nothing when it cannot be
    read (the plan names that)."""
    try:
        data = read_yaml(file)
    except UnreadableError:
        return []
    config = data.get("config") if isinstance(data, dict) else None
    jobs = config.get(f"{NAMESPACE}:jobs") if isinstance(config, dict) else None
    found = []
    for job in (jobs or {}).values() if isinstance(jobs, dict) else ():
        trainer = job.get("trainer") if isinstance(job, dict) else None
        path = trainer.get("path") if isinstance(trainer, dict) else None
        if isinstance(path, str) and path and not PurePosixPath(path).is_absolute() and ".." not in path:
            found.append(PurePosixPath(path).as_posix())
    return found


class _Tree:
    """A commit's files, written into a scratch folder on demand (ls-tree to list, cat-file to read)."""

    def __init__(self, top: Path, commit: str, scratch: Path) -> None:
        self.top, self.commit, self.scratch = top, commit, scratch

    def names_in(self, folder: str) -> list[str]:
        """The names of the files directly in a folder of the commit."""
        listing = _git(self.top, "ls-tree", "-z", "--full-tree", self.commit, "--", f"{folder.rstrip('/')}/")
        return [PurePosixPath(entry.split(b"\t", 1)[1].decode()).name for entry in listing.split(b"\0") if entry]

    def write(self, paths: list[str], folders: bool = False) -> None:
        """Write these files (or, with `folders`, everything under these folders) that exist in the commit."""
        if not paths:
            return
        args = ["ls-tree", "-r", "-z", "--full-tree", self.commit, "--"]
        listing = _git(self.top, *args, *(f"{p.rstrip('/')}/" if folders else p for p in paths))
        entries = []
        for entry in listing.split(b"\0"):
            if entry:
                meta, name = entry.split(b"\t", 1)
                mode, kind, sha = meta.decode().split()
                if kind == "blob":  # submodules (commit) are not part of the project's files
                    entries.append((mode, sha, name.decode()))
        contents = self._blobs([sha for _, sha, _ in entries])
        for (mode, _sha, path), content in zip(entries, contents, strict=True):
            target = self.scratch / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                target.symlink_to(content.decode())
            else:
                target.write_bytes(content)
                target.chmod(0o755 if mode == "100755" else 0o644)

    def _blobs(self, shas: list[str]) -> list[bytes]:
        if not shas:
            return []
        out = _git(self.top, "cat-file", "--batch", data="".join(f"{sha}\n" for sha in shas).encode())
        blobs, at = [], 0
        for _ in shas:
            header_end = out.index(b"\n", at)
            size = int(out[at:header_end].split()[2])
            blobs.append(out[header_end + 1:header_end + 1 + size])
            at = header_end + 1 + size + 1  # the blob, then a newline
        return blobs


def inputs_of(side: Side, name: str) -> str:
    """A digest of every file the plan of a stack reads on a side: the program's files (program_files: Pulumi.yaml,
    `__main__.py` and the team's code beside it), the stack's file and the files of each trainer folder it names that
    its package archives (resources.trainer_source.trainer_files). The library and the price table are the same on
    both sides by construction: this one process plans both, at the head's prices."""
    digest = hashlib.sha256()
    if side.program_digest is None:
        side.program_digest = _digest_of(program_files(side))
    digest.update(side.program_digest.encode() + b"\0")
    file = side.stacks[name]
    _add(digest, "stack", file)
    for folder in sorted(set(_trainer_paths(file))):
        top = side.root / folder
        try:
            files = trainer_files(top) if top.is_dir() else []
        except TrainerLinkError:  # the plan names it: the stack is planned
            return f"unreadable {folder}"
        digest.update(f"trainer {folder} {len(files)}".encode() + b"\0")
        for path in files:
            _add(digest, path.relative_to(top.resolve()).as_posix(), path)
    return digest.hexdigest()


def _add(digest: Any, label: str, path: Path) -> None:
    digest.update(label.encode() + b"\0")
    if path.is_symlink():
        digest.update(b"link " + os.readlink(path).encode())
    elif path.is_file():
        digest.update(path.read_bytes())
    else:
        digest.update(b"absent")
    digest.update(b"\0")


def _digest_of(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for label, path in files:
        _add(digest, label, path)
    return digest.hexdigest()


def program_files(side: Side) -> list[tuple[str, Path]]:
    """The files of a side's project folder its program may import or read, by their path in it, sorted: at a ref,
    what was read of it (the project folder as git holds it); in the working tree, the files git holds there and
    those it would add (untracked, not ignored; a virtualenv left out). Not the stack files (each stack's digest
    holds its own), the trainer folders the side's stacks name (the stacks that name one hold it), Python's caches,
    nor a folder of this library's name (the program imports the library this process runs)."""
    root = side.root.resolve()
    names = _ref_names(root) if side.scratch is not None else _worktree_names(root)
    folder = (side.folder or side.root).resolve()
    stacks = folder.relative_to(root).as_posix() if folder.is_relative_to(root) else None
    trainers = {PurePosixPath(path) for file in side.stacks.values() for path in _trainer_paths(file)}
    found = []
    for name in sorted(set(names)):
        path = PurePosixPath(name)
        if path.parts[0] == LIBRARY_PACKAGE or any(part in CACHES for part in path.parts) \
                or path.name.endswith(CACHE_SUFFIXES) or any(path.is_relative_to(t) for t in trainers) \
                or (str(path.parent) == stacks and STACK_FILE.fullmatch(path.name)):
            continue
        if (root / name).is_file() or (root / name).is_symlink():
            found.append((name, root / name))
    return found


def _ref_names(root: Path) -> list[str]:
    """Every file a ref's scratch folder holds under the project folder (all of it read from git)."""
    found = []
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in CACHES]
        here = Path(current)
        found += [(here / f).relative_to(root).as_posix() for f in files]
        found += [(here / d).relative_to(root).as_posix() for d in dirs if (here / d).is_symlink()]
    return found


def _worktree_names(root: Path) -> list[str]:
    """The files git holds in the working tree's project folder and the untracked ones it does not ignore, a
    virtualenv left out (a folder holding pyvenv.cfg: a project's own, as Pulumi's Python template makes it)."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--directory", "--", ".")
    names, folders = [], []
    for entry in (e.decode() for e in listed.split(b"\0") if e):
        if not entry.endswith("/"):
            names.append(entry)
        elif not (root / entry / "pyvenv.cfg").is_file():
            folders.append(entry)
    if folders:
        inside = _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *folders)
        names += [e.decode() for e in inside.split(b"\0") if e]
    return names


def same_inputs(before: Side, after: Side, names: list[str]) -> list[str]:
    """The stacks whose plan reads the same files on both sides (inputs_of): their plans are the same by
    construction, so `diff` judges each once (judge_side) instead of running the program twice."""
    return [name for name in names if name in before.stacks and name in after.stacks
            and inputs_of(before, name) == inputs_of(after, name)]


def judge_side(side: Side, stacks: list[str]) -> Plans:
    """Each named stack judged from its file alone (plan.command.judge_stack: the program not run), for the stacks
    the same on both sides; one or more lines naming its file when it cannot be judged."""
    return _each(side, stacks, judge_stack)


def plan_side(side: Side, stacks: list[str]) -> Plans:
    """Plan each named stack the side has, through `plan`'s one pass; every stack that cannot be planned is one
    or more lines naming its file (as `REF:path` on a ref's side)."""
    return _each(side, stacks, plan_stack)


def _each(side: Side, stacks: list[str], how: Callable[[str, Path, Path], Planned]) -> Plans:
    found = Plans()
    for name in stacks:
        path = side.stacks.get(name)
        if path is None:
            continue
        try:
            found.planned[name] = how(name, path, side.root)
        except SpecError as error:
            found.errors += [side.named(str(p.within(file=str(path)))) for p in error.problems]
        except TrainingJobsError as error:  # unreadable (the file, the price table), the program failed, ...
            found.errors.append(side.named(str(error)))
    return found


def as_data(value: Any) -> Any:
    """Registered inputs as JSON-like data, a file asset by its file name (the archive's name holds its hash; its
    folder differs between the sides)."""
    if isinstance(value, dict):
        return {k: as_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_data(v) for v in value]
    if type(value).__name__.endswith(("Asset", "Archive")):
        return {"asset": PurePosixPath(str(getattr(value, "path", value))).name}
    return value
