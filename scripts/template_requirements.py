#!/usr/bin/env python3
"""template_requirements.py: the template's requirements.txt (templates/gcp-training-jobs/), from this release.

A team's project pins this library at the version of the release the template came with
(gcp_training_jobs/jobspec/core/version.py's __version__) and every one of its dependencies at the version this
repository's lock (requirements.txt) pins and its tests ran on. The pins carry no hashes: pip's hash-checking mode
needs a hash for every line, the library's included, and the library's own artifact has one only once it is
published; a team that wants hashes compiles its own lock from this file (`uv pip compile --generate-hashes
requirements.txt`) once the release is on PyPI.

Usage: scripts/template_requirements.py [--write]   print the file, or write it (tests/test_template.py holds the
                                                   file in the template to this output)
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.txt"
VERSION_HOME = ROOT / "gcp_training_jobs" / "jobspec" / "core" / "version.py"
TARGET = ROOT / "templates" / "gcp-training-jobs" / "requirements.txt"
PIN = re.compile(r"^(?P<pin>[A-Za-z0-9][A-Za-z0-9._-]*==[^\s;\\]+)(?P<marker>\s*;[^\\]*)?")


def version() -> str:
    for node in ast.parse(VERSION_HOME.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                 for t in node.targets) and isinstance(node.value, ast.Constant)):
            return str(node.value.value)
    raise SystemExit(f"{VERSION_HOME}: no __version__")


def pins(lock_text: str) -> list[str]:
    """Each `name==version` of a lock with its environment marker, without hashes or comments."""
    found = []
    for line in lock_text.splitlines():
        match = PIN.match(line)
        if match:
            found.append(match.group("pin") + (" ;" + match.group("marker").split(";", 1)[1].rstrip()
                                               if match.group("marker") else ""))
    return found


def render() -> str:
    release = version()
    return "\n".join([
        "# This project's Python packages, every one pinned (`pulumi install`, or the first `pulumi up`, installs them",
        "# into venv/). Written by gcp-training-jobs' scripts/template_requirements.py for its release",
        f"# {release}: the library at that release, and its dependencies at the versions its lock pins and its tests",
        "# ran on. Move them together: a newer release of the template (or of the library's requirements.txt).",
        "#",
        "# Before the release reaches PyPI, the pinned library comes from a wheel built from a checkout at the",
        f"# release's tag (`python -m build --wheel`: gcp_training_jobs-{release}-py3-none-any.whl), kept in wheels/",
        "# beside this file, where pip finds it (a folder that does not exist is passed over, with a warning).",
        "--find-links wheels",
        f"gcp-training-jobs=={release}",
        *pins(LOCK.read_text(encoding="utf-8")),
        "",
    ])


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        TARGET.write_text(render(), encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)}", file=sys.stderr)
        return 0
    if argv:
        print("usage: scripts/template_requirements.py [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
