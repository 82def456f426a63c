#!/usr/bin/env python3
"""template_requirements.py: the template's requirements.txt (templates/gcp-training-jobs/), hash-locked.

A team's project pins this library at the version of the release the template came with
(gcp_training_jobs/jobspec/core/version.py's __version__) and every one of its dependencies at the version this
repository's lock (requirements.txt, made by scripts/lock-deps.sh) pins and its tests ran on, each with the sha256
of every artifact the lock names for it, so pip installs them in hash-checking mode (`--require-hashes`). pip's
hash-checking mode needs a hash on every line, the library's included: the library's is the sha256 of the wheel
this checkout builds (`python -m build --no-isolation`, as the release workflow builds it, at the fixed
SOURCE_DATE_EPOCH below, so the same tree always gives the same bytes). The release workflow refuses to publish a
wheel whose hash is not the template's, so the wheel on PyPI, a wheel built from the release's tag and the
template's pin are one artifact.

Usage: scripts/template_requirements.py [--write]
  (no argument)  print the file, the library's hash kept from the file in the template
  --write        build the wheel, hash it, and write the file (run it with the release: a version bump, a change of
                 the lock, or of the library before a release; tests/test_template.py holds the rest of the file to
                 the lock, and the release workflow the hash to the wheel it publishes)
  --check WHEEL  exit 1 unless WHEEL's sha256 is the template's pin (the release workflow's check)
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.txt"
VERSION_HOME = ROOT / "gcp_training_jobs" / "jobspec" / "core" / "version.py"
TARGET = ROOT / "templates" / "gcp-training-jobs" / "requirements.txt"
PIN = re.compile(r"^(?P<pin>[A-Za-z0-9][A-Za-z0-9._-]*==[^\s;\\]+)(?P<marker>\s*;[^\\]*)?")
HASH = re.compile(r"^\s+(--hash=sha256:[0-9a-f]{64})")
LIBRARY_HASH = re.compile(r"^gcp-training-jobs==\S+ \\\n\s+--hash=sha256:(?P<hash>[0-9a-f]{64})$", re.MULTILINE)
#: The build's timestamp (1980-01-01, the earliest a zip holds): the wheel's bytes depend on the tree alone.
SOURCE_DATE_EPOCH = "315532800"
#: What the wheel is built from (pyproject.toml's packages and metadata).
BUILT_FROM = ("pyproject.toml", "README.md", "LICENSE", "gcp_training_jobs")


def version() -> str:
    for node in ast.parse(VERSION_HOME.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                 for t in node.targets) and isinstance(node.value, ast.Constant)):
            return str(node.value.value)
    raise SystemExit(f"{VERSION_HOME}: no __version__")


def entries(lock_text: str) -> list[tuple[str, list[str]]]:
    """Each `name==version` of a lock with its environment marker, and its `--hash=sha256:...` options."""
    found: list[tuple[str, list[str]]] = []
    for line in lock_text.splitlines():
        match = PIN.match(line)
        if match:
            marker = match.group("marker")
            found.append((match.group("pin") + (" ;" + marker.split(";", 1)[1].rstrip() if marker else ""), []))
            continue
        hashed = HASH.match(line)
        if hashed and found:
            found[-1][1].append(hashed.group(1))
    return found


def pins(lock_text: str) -> list[str]:
    """Each `name==version` of a lock with its environment marker, without hashes or comments."""
    return [pin for pin, _ in entries(lock_text)]


def _requirement(pin: str, hashes: list[str]) -> list[str]:
    return [pin + " \\", *(f"    {h} \\" for h in hashes[:-1]), f"    {hashes[-1]}"]


def render(library_hash: str) -> str:
    release = version()
    lines = [
        "# This project's Python packages, every one pinned with the sha256 of each of its artifacts: install them",
        "# with `pip install --require-hashes -r requirements.txt` (`pulumi install`, or the first `pulumi up`,",
        "# installs them into venv/; pip checks hashes whenever a file has them). Written by gcp-training-jobs'",
        f"# scripts/template_requirements.py for its release {release}: the library's wheel at that release, and its",
        "# dependencies at the versions and hashes its lock pins and its tests ran on. Move them together: a newer",
        "# release of the template.",
        "#",
        "# Before the release reaches PyPI, the pinned wheel comes from a checkout at the release's tag, built as the",
        f"# release builds it (`SOURCE_DATE_EPOCH={SOURCE_DATE_EPOCH} python -m build --no-isolation`:",
        f"# gcp_training_jobs-{release}-py3-none-any.whl, the same bytes), kept in wheels/ beside this file, where pip",
        "# finds it (a folder that does not exist is passed over, with a warning).",
        "--find-links wheels",
        *_requirement(f"gcp-training-jobs=={release}", [f"--hash=sha256:{library_hash}"]),
    ]
    for pin, hashes in entries(LOCK.read_text(encoding="utf-8")):
        lines += _requirement(pin, hashes)
    return "\n".join([*lines, ""])


def recorded_hash(text: str) -> str:
    """The library's sha256 a requirements file pins."""
    match = LIBRARY_HASH.search(text)
    if match is None:
        raise SystemExit(f"{TARGET.relative_to(ROOT)}: no `gcp-training-jobs==VERSION --hash=sha256:...` line")
    return match.group("hash")


def build_wheel(out: Path) -> Path:
    """The wheel of this checkout, built as the release builds it (sdist, then the wheel from it; no download)."""
    source = out / "source"
    source.mkdir()
    for name in BUILT_FROM:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    for path in [source, *source.rglob("*")]:  # a checkout's modes, whatever the umask of the machine
        path.chmod(0o755 if path.is_dir() else 0o644)
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "dist"), str(source)],
                   check=True, capture_output=True, env={**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH})
    return next((out / "dist").glob("gcp_training_jobs-*.whl"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        with tempfile.TemporaryDirectory() as scratch:
            digest = sha256(build_wheel(Path(scratch)))
        TARGET.write_text(render(digest), encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)} (the wheel's sha256 {digest})", file=sys.stderr)
        return 0
    if len(argv) == 2 and argv[0] == "--check":
        pinned, built = recorded_hash(TARGET.read_text(encoding="utf-8")), sha256(Path(argv[1]))
        if pinned != built:
            print(f"template_requirements.py: {argv[1]} has sha256 {built}; the template pins {pinned} "
                  "(run scripts/template_requirements.py --write before the release)", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: scripts/template_requirements.py [--write | --check WHEEL]", file=sys.stderr)
        return 2
    sys.stdout.write(render(recorded_hash(TARGET.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
