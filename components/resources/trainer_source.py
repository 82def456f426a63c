"""Trainer code in this repository: which folders are trainers, and which modules they hold. Pure (no
Pulumi): the settings judge a trainer path with it, and TrainerPackage builds from it."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationInfo, field_validator

from components.jobspec.models import WireModel

#: Files that make a folder a Python project (built as it says) rather than a bare package.
PROJECT_FILES = ("setup.py", "pyproject.toml")


def trainer_layout(folder: Path) -> str | None:
    """How a trainer folder is built: "setup.py", "pyproject.toml", "package" (a bare package, for which a
    setup.py is generated as gcloud's --package-path does), or None when it is none of these."""
    for name in PROJECT_FILES:
        if (folder / name).is_file():
            return name
    if (folder / "__init__.py").is_file():
        return "package"
    return None


class TrainerSource(WireModel):
    """Trainer code in this repository, built into a source distribution and uploaded by the stack."""

    path: str
    """The folder, relative to the project root (where Pulumi.yaml is)."""

    @field_validator("path")
    @classmethod
    def _is_trainer(cls, value: str, info: ValidationInfo) -> str:
        root = _root_of(info)
        folder = root / value
        if not folder.is_dir():
            raise ValueError(f"no such folder under {root}; allowed: a folder with setup.py or pyproject.toml, "
                             "or a Python package folder (with __init__.py)")
        if trainer_layout(folder) is None:
            raise ValueError("has neither setup.py, pyproject.toml nor __init__.py; allowed: a Python project "
                             "folder or a Python package folder")
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
