"""Trainer code in this repository: which folders are trainers, which files of them are archived, and
which modules they hold. Pure (no Pulumi): the settings judge a trainer path with it, and TrainerPackage
builds from it.

A trainer is confined to the repository: its path resolves inside the project root (no `..` out of it, no
absolute path, no symlinked folder leading elsewhere), and a symbolic link inside it that leads out of the
trainer folder is refused, never followed into the archive. Hidden files and folders, caches, VCS and
virtualenv folders and compiled files are left out.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from pydantic import ValidationInfo, field_validator

from gcp_training_jobs.jobspec.catalog.credentials import credential_in
from gcp_training_jobs.jobspec.core.errors import ConcealedValueError, TrainingJobsError
from gcp_training_jobs.jobspec.vocab.training_input import WireModel

#: Files that make a folder a Python project (built as it says) rather than a bare package.
PROJECT_FILES = ("setup.py", "pyproject.toml")
#: Folders never archived (besides every hidden one: .git, .venv, .idea, ...).
EXCLUDED_DIRS = frozenset({"__pycache__", "venv", "build", "dist", "node_modules"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".egg-info")


class TrainerLinkError(TrainingJobsError, ValueError):
    """A symbolic link in a trainer folder that leads out of it."""


def trainer_layout(folder: Path) -> str | None:
    """How a trainer folder is built: "setup.py", "pyproject.toml", "package" (a bare package, for which a
    setup.py is generated as gcloud's --package-path does), or None when it is none of these."""
    for name in PROJECT_FILES:
        if (folder / name).is_file():
            return name
    if (folder / "__init__.py").is_file():
        return "package"
    return None


def confinement_problem(root: Path, value: str) -> str | None:
    """Why a trainer path does not name a folder inside the project root, or None when it does."""
    if PurePath(value).is_absolute() or value.startswith("~"):
        return "is an absolute path; allowed: a folder relative to the project root (where Pulumi.yaml is), inside it"
    top = root.resolve()
    folder = (root / value).resolve()
    if not folder.is_relative_to(top):
        how = "through a symbolic link" if ".." not in PurePath(value).parts else "with .."
        return (f"leads out of the project root {how} (to {folder}); allowed: a folder inside the project root "
                f"{top}")
    return None


def _excluded(name: str, is_dir: bool) -> bool:
    if name.startswith("."):
        return True
    if is_dir:
        return name in EXCLUDED_DIRS or name.endswith(".egg-info")
    return name.endswith(EXCLUDED_SUFFIXES)


def _inside(path: Path, top: Path) -> None:
    if path.is_symlink() and not path.resolve().is_relative_to(top):
        raise TrainerLinkError(f"{path} is a symbolic link to {path.resolve()}, outside the trainer folder {top}; "
                               "allowed: links to files inside the trainer folder (a link out of it is never "
                               "followed into the archive)")


def trainer_files(folder: Path) -> list[Path]:
    """Every file of a trainer folder that belongs in its source distribution, sorted. TrainerLinkError
    names a symbolic link that leads out of the folder; linked folders inside it are not walked twice."""
    top = folder.resolve()
    found: list[Path] = []
    for current, dirs, files in os.walk(top):  # links to folders are listed, never descended into
        here = Path(current)
        kept = []
        for name in sorted(dirs):
            if not _excluded(name, is_dir=True):
                _inside(here / name, top)
                if not (here / name).is_symlink():
                    kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = here / name
            if not _excluded(name, is_dir=False):
                _inside(path, top)
                if path.is_file():
                    found.append(path)
    return found


class TrainerSource(WireModel):
    """Trainer code in this repository, built into a source distribution and uploaded by the stack."""

    path: str
    """The folder, relative to the project root (where Pulumi.yaml is)."""

    @field_validator("path")
    @classmethod
    def _is_trainer(cls, value: str, info: ValidationInfo) -> str:
        root = _root_of(info)
        problem = confinement_problem(root, value)
        if problem is not None:
            raise ValueError(problem)
        folder = root / value
        if not folder.is_dir() and (found := credential_in(value)) is not None:  # named by its kind, never shown
            raise ConcealedValueError(f"holds what looks like {found.named()} (not shown), and is no folder under "
                                      f"{root}; allowed: a folder with setup.py or pyproject.toml, or a Python "
                                      "package folder (with __init__.py)")
        if not folder.is_dir():
            raise ValueError(f"no such folder under {root}; allowed: a folder with setup.py or pyproject.toml, "
                             "or a Python package folder (with __init__.py)")
        if trainer_layout(folder) is None:
            raise ValueError("has neither setup.py, pyproject.toml nor __init__.py; allowed: a Python project "
                             "folder or a Python package folder")
        trainer_files(folder)  # TrainerLinkError (a ValueError) names a link out of the folder
        return value

    def folder(self, root: Path) -> Path:
        return (root / self.path).resolve()

    def has_module(self, root: Path, module: str) -> bool:
        """Whether the dotted module is a file of the trainer (any package directory layout)."""
        folder = self.folder(root)
        parts = module.split(".")
        if trainer_layout(folder) == "package":  # the folder is the top package: NAME.sub.module
            if parts[0] != folder.name:
                return False
            inner = parts[1:]
            candidates = [folder.joinpath(*inner).with_suffix(".py"), folder.joinpath(*inner, "__init__.py")]
            return any(c.is_file() for c in candidates) if inner else True
        tail = "/".join(parts)
        return any(folder.glob(f"**/{tail}.py")) or any(folder.glob(f"**/{tail}/__init__.py"))


def _root_of(info: ValidationInfo) -> Path:
    context = info.context if isinstance(info.context, dict) else {}
    root = context.get("root")
    return Path(root) if root is not None else Path.cwd()
