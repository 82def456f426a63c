"""TrainerPackage: a trainer folder of this repository, built into a source distribution and uploaded.

What `gcloud ai-platform jobs submit training --package-path` does, made reproducible: a folder with
setup.py or pyproject.toml is archived as it is; a bare package folder (with __init__.py) gets the
setup.py gcloud generates for it (googlecloudsdk/command_lib/ml_engine/jobs_prep.py: DEFAULT_SETUP_FILE,
`find_packages(include=[NAME])`). The archive is built in pure Python, offline and deterministically
(sorted entries, fixed mtime, owner and modes, gzip mtime 0; hidden files, caches and VCS folders left out,
links out of the folder refused: trainer_source.trainer_files), into a
build folder outside the source tree, and named by its content hash: `NAME-<sha256[:16]>.tar.gz`.

So an unchanged trainer gives the same object name and nothing changes; a changed trainer gives a new
object (the old one is deleted after), new packageUris, and the jobs using it are replaced. Two
machines whose zlib builds compress differently would also give different names (and replace jobs):
build where you deploy from.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import os
import re
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gcp_training_jobs.jobspec.core.env import VARIABLES, env_settings
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.resources.args import resolve_args
from gcp_training_jobs.resources.trainer_source import TrainerLinkError, trainer_files, trainer_layout

TYPE = "gcp-training:index:TrainerPackage"
#: Overrides where archives are built (default: ROOT/.build/trainers).
BUILD_DIR_ENV = VARIABLES["build_dir"]
#: Object prefix in the staging bucket.
PREFIX = "trainers"
#: 1980-01-01T00:00:00Z: the oldest time every archive format (zip included) can hold.
FIXED_MTIME = 315532800

#: gcloud's generated setup.py for a bare package folder (jobs_prep.py, DEFAULT_SETUP_FILE).
GCLOUD_SETUP_PY = """\
from setuptools import setup, find_packages

if __name__ == '__main__':
    setup(
        name='{package_name}',
        packages=find_packages(include=['{package_name}'])
    )
"""


class BuildError(TrainingJobsError):
    """A trainer folder that cannot be built."""


@dataclass(frozen=True)
class SourceDistribution:
    """A built trainer archive."""

    name: str
    """The distribution's name (from setup.py or pyproject.toml, else the folder's name)."""
    version: str
    digest: str
    """sha256 of the archive, hex."""
    path: Path
    """The archive on disk."""
    members: tuple[str, ...]
    """The files in the archive (paths inside it)."""

    @property
    def file_name(self) -> str:
        return self.path.name

    @property
    def object_name(self) -> str:
        """The object's name in the staging bucket."""
        return f"{PREFIX}/{self.file_name}"


def default_build_dir(root: Path) -> Path:
    configured = env_settings().build_dir
    return configured if configured is not None else root / ".build" / PREFIX


def _literal_setup_args(setup_py: Path) -> dict[str, str]:
    """name= and version= of the setup() call, when written as plain strings (setup.py is never run)."""
    try:
        tree = ast.parse(setup_py.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError) as error:
        raise BuildError(f"{setup_py}: cannot be parsed: {error}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setup":
            return {kw.arg: kw.value.value for kw in node.keywords
                    if kw.arg in ("name", "version") and isinstance(kw.value, ast.Constant)
                    and isinstance(kw.value.value, str)}
    return {}


def _metadata(folder: Path, layout: str) -> tuple[str, str | None]:
    """(name, version) of the distribution; version None when only the build backend knows it."""
    if layout == "setup.py":
        found = _literal_setup_args(folder / "setup.py")
        return found.get("name", folder.name), found.get("version")
    if layout == "pyproject.toml":
        try:
            project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise BuildError(f"{folder / 'pyproject.toml'}: cannot be parsed: {error}") from None
        version = project.get("version")
        return str(project.get("name") or folder.name), str(version) if version else None
    return folder.name, "0.0.0"  # setuptools' version of gcloud's generated setup.py


def normalized(name: str) -> str:
    """A distribution name as sdist file names write it (PEP 625: lowercase, separators as _)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _entries(folder: Path, layout: str, name: str, version: str | None) -> list[tuple[str, bytes, int]]:
    """(path in archive, content, mode) of every file, the top folder being NAME-VERSION/."""
    top = f"{normalized(name)}-{version or '0.0.0'}"
    entries: list[tuple[str, bytes, int]] = []
    if layout == "package":
        entries.append((f"{top}/setup.py", GCLOUD_SETUP_PY.format(package_name=folder.name).encode(), 0o644))
        base = folder.parent
    else:
        base = folder
    for path in trainer_files(folder):
        relative = path.relative_to(base).as_posix()
        mode = 0o755 if os.access(path, os.X_OK) else 0o644
        entries.append((f"{top}/{relative}", path.read_bytes(), mode))
    if version is not None and not any(e[0] == f"{top}/PKG-INFO" for e in entries):
        info = f"Metadata-Version: 1.0\nName: {name}\nVersion: {version}\n".encode()
        entries.append((f"{top}/PKG-INFO", info, 0o644))
    return sorted(entries)


def _archive(entries: list[tuple[str, bytes, int]]) -> bytes:
    """A .tar.gz of the entries that depends on nothing but them (no times, owners or umask)."""
    directories = sorted({p.as_posix() for path, _, _ in entries for p in Path(path).parents if str(p) != "."})
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(_fixed(info))
        for path, content, mode in entries:
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(content), mode
            tar.addfile(_fixed(info), io.BytesIO(content))
    return raw.getvalue()


def _fixed(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = FIXED_MTIME, 0, 0, "", ""
    return info


def build_sdist(folder: Path, build_dir: Path) -> SourceDistribution:
    """Build (or find already built) the source distribution of a trainer folder; BuildError if it cannot."""
    folder = folder.resolve()
    layout = trainer_layout(folder)
    if layout is None:
        raise BuildError(f"{folder}: neither setup.py, pyproject.toml nor __init__.py")
    name, version = _metadata(folder, layout)
    try:
        entries = _entries(folder, layout, name, version)
        data = _archive(entries)
        digest = hashlib.sha256(data).hexdigest()
        path = build_dir / f"{normalized(name)}-{digest[:16]}.tar.gz"
        if not path.is_file():
            build_dir.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            partial.write_bytes(data)
            os.replace(partial, path)  # atomic: a concurrent build writes the same bytes
    except TrainerLinkError as error:
        raise BuildError(str(error)) from None
    except OSError as error:
        raise BuildError(f"{folder}: cannot be built: {error}") from None
    return SourceDistribution(name, version or "0.0.0", digest, path, tuple(e[0] for e in entries))


@dataclass
class TrainerPackageArgs:
    """Which trainer, built where, uploaded where."""

    source: Path
    """The trainer folder (setup.py / pyproject.toml project, or a bare package folder)."""
    bucket: pulumi.Input[str]
    """The staging bucket's name."""
    build_dir: Path
    """Where the archive is written (outside the source tree; kept: Pulumi reads it at apply)."""
    config_key: str = "trainer.path"
    """The stack config key naming the trainer, for error messages."""


class TrainerPackage(pulumi.ComponentResource):
    """A trainer's source distribution in the staging bucket, as `trainingInput.packageUris` wants it."""

    sdist: SourceDistribution
    """The built archive."""
    object: gcp.storage.BucketObject
    """The uploaded archive."""
    uri: pulumi.Output[str]
    """gs://BUCKET/trainers/NAME-HASH.tar.gz."""

    def __init__(self, name: str, args: TrainerPackageArgs | None = None, opts: pulumi.ResourceOptions | None = None,
                 **kwargs: Any) -> None:
        args = resolve_args(TrainerPackageArgs, args, kwargs)
        super().__init__(TYPE, name, None, opts)
        try:
            self.sdist = build_sdist(args.source, args.build_dir)
        except BuildError as error:
            raise pulumi.RunError(f"{args.config_key}: cannot build the trainer package: {error}") from None
        self.object = gcp.storage.BucketObject(
            f"{name}-sdist",
            bucket=args.bucket,
            name=self.sdist.object_name,
            source=pulumi.FileAsset(str(_relative(self.sdist.path))),
            content_type="application/gzip",
            opts=pulumi.ResourceOptions(parent=self),
        )
        object_name = self.sdist.object_name
        self.uri = pulumi.Output.from_input(args.bucket).apply(lambda bucket: f"gs://{bucket}/{object_name}")
        self.register_outputs({"uri": self.uri, "objectName": object_name, "sha256": self.sdist.digest})


def _relative(path: Path) -> Path:
    """The archive's path relative to the working directory when inside it (state stays machine-neutral)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path
