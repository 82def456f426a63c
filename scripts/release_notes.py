#!/usr/bin/env python3
"""release_notes.py: a release's notes, from CHANGELOG.md, after checking the tag is the library's version.

Usage:
  scripts/release_notes.py TAG          print the body of CHANGELOG.md's section for TAG (`v0.2.0`: `## [0.2.0] - DATE`)
                                        to stdout; exit 1, with the reason on stderr, when TAG is not `v` + the
                                        version in gcp_training_jobs/jobspec/core/version.py or the changelog has no
                                        such section
  scripts/release_notes.py --newest     print the newest released version in CHANGELOG.md (after [Unreleased])

The release workflow (.github/workflows/release.yml) runs it first, so a tag that disagrees with the version
publishes nothing; tests/test_release.py runs it on this repository's changelog and on broken ones.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
#: The one home of the version (pyproject.toml reads it too: [tool.setuptools.dynamic]).
VERSION_HOME = ROOT / "gcp_training_jobs" / "jobspec" / "core" / "version.py"
#: A released section's heading, as Keep a Changelog 1.1.0 writes it: `## [1.2.3] - 2026-11-26`.
RELEASED = re.compile(r"^## \[(?P<version>\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.+-]+)?)\] - (?P<date>\d{4}-\d{2}-\d{2})\s*$")
HEADING = re.compile(r"^## ")


class ReleaseError(Exception):
    """The tag, the version and the changelog disagree; the message says how."""


def version_in(home: Path = VERSION_HOME) -> str:
    """`__version__` of the package, read without importing it (no dependency needed)."""
    for node in ast.parse(home.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                 for t in node.targets)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    raise ReleaseError(f"{home.relative_to(ROOT)}: no __version__ = \"X.Y.Z\"")


def sections(text: str) -> dict[str, str]:
    """Each released version of a changelog with its section's body (the lines after its heading, stripped)."""
    found: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in [*text.splitlines(), "## end"]:
        if HEADING.match(line):
            if current is not None:
                found[current] = "\n".join(lines).strip() + "\n"
            match = RELEASED.match(line)
            current, lines = (match.group("version") if match else None), []
        elif current is not None:
            lines.append(line)
    return found


def newest(text: str) -> str:
    released = list(sections(text))
    if not released:
        raise ReleaseError("CHANGELOG.md: no released section (`## [X.Y.Z] - YYYY-MM-DD`)")
    return released[0]


def notes(tag: str, text: str, version: str) -> str:
    """The body of the tag's section, once the tag, the version and the changelog's newest release agree."""
    if tag != f"v{version}":
        raise ReleaseError(f"tag {tag!r} is not the library's version: gcp_training_jobs/jobspec/core/version.py says "
                           f"{version!r} (tag v{version}, or change __version__ and CHANGELOG.md first)")
    found = sections(text)
    if version not in found:
        raise ReleaseError(f"CHANGELOG.md has no section `## [{version}] - YYYY-MM-DD` "
                           "(move the Unreleased entries under it)")
    if newest(text) != version:
        raise ReleaseError(f"CHANGELOG.md's newest released section is {newest(text)}, not {version}")
    if not found[version].strip():
        raise ReleaseError(f"CHANGELOG.md's section for {version} is empty")
    return found[version]


def main(argv: list[str]) -> int:
    try:
        text = CHANGELOG.read_text(encoding="utf-8")
        if argv == ["--newest"]:
            print(newest(text))
            return 0
        if len(argv) != 1 or argv[0].startswith("-"):
            print("usage: scripts/release_notes.py TAG | --newest", file=sys.stderr)
            return 2
        sys.stdout.write(notes(argv[0], text, version_in()))
        return 0
    except ReleaseError as error:
        print(f"release_notes.py: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
