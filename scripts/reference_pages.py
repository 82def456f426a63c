#!/usr/bin/env python3
"""The documentation's generated reference tables, written from the code so a page cannot restate it wrongly:

- docs/reference/environment.md: every variable of `EnvSettings` (gcp_training_jobs/jobspec/core/env.py), its default,
  what it allows (the words the error message uses) and what it means, each from its field;
- docs/reference/commands.md: every command of the argparse parser (gcp_training_jobs/cli/main.py) with each option and
  its help.

Each table sits between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->` in its page.

    venv/bin/python scripts/reference_pages.py            # print the tables
    venv/bin/python scripts/reference_pages.py --write    # put them into their pages, in place of the old ones

tests/test_docs_reference.py holds each page to this output (scripts/hardware_table.py writes the hardware page's).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gcp_training_jobs.cli.main import parser as cli_parser  # noqa: E402
from gcp_training_jobs.jobspec.core import env  # noqa: E402

DOCS = ROOT / "docs" / "reference"

UNSET = ", or unset for "


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def environment_table() -> str:
    """| variable | default | allowed | meaning |, one row per EnvSettings field, in the model's order."""
    lines = ["| variable | default | allowed | meaning |", "|---|---|---|---|"]
    for field, variable in env.VARIABLES.items():
        allowed, _, default = env.ALLOWED[field].partition(UNSET)
        lines.append(f"| `{variable}` | {_cell(default)} | {_cell(allowed)} | {env.MEANINGS[field]} |")
    return "\n".join(lines) + "\n"


def _commands(top: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of every command, nested ones (`prices refresh`) by their full name, in the parser's
    order."""
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", helps.get(name, ""), sub
                yield from _commands(sub, f"{prefix}{name} ")


def _option(action: argparse.Action) -> str:
    names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{(action.metavar or action.dest).upper()}`"
    if action.option_strings and action.nargs != 0:
        metavar = action.metavar or action.dest.upper()
        if action.choices:
            metavar = "{" + ",".join(str(c) for c in action.choices) + "}"
        names += f" {_cell(str(metavar))}"
    return names


def commands_table() -> str:
    """One section per command: what it does, then | option | what it does | for each of its arguments."""
    formatter = argparse.HelpFormatter("gcp-training-jobs")
    out: list[str] = []
    for name, summary, sub in _commands(cli_parser()):
        rows = [action for action in sub._actions if not isinstance(action, (argparse._HelpAction,
                                                                            argparse._SubParsersAction))]
        out += [f"### {name}", "", f"{_cell(summary)}." if summary else "", ""]
        if rows:
            out += ["| argument | what it does |", "|---|---|"]
            out += [f"| {_option(a)} | {_cell(formatter._expand_help(a)) if a.help else ''} |" for a in rows]
            out.append("")
    return "\n".join(line for i, line in enumerate(out) if line or (i and out[i - 1])) + "\n"


#: Each generated table: its page and its writer.
TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "environment": (DOCS / "environment.md", environment_table),
    "commands": (DOCS / "commands.md", commands_table),
}


def marked(name: str, text: str) -> str:
    """The table between a page's markers (what --write replaces); '' when the page has no markers."""
    found = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- end generated: {name} -->", text, re.S)
    return found.group(1) if found else ""


def written(name: str, text: str, table: str) -> str:
    start, end = f"<!-- generated: {name} -->\n", f"<!-- end generated: {name} -->"
    before, rest = text.split(start, 1)
    return before + start + table + end + rest.split(end, 1)[1]


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--write", action="store_true", help="replace the tables in their pages")
    if not args.parse_args(argv).write:
        for _, make in TABLES.values():
            print(make())
        return 0
    for name, (page, make) in TABLES.items():
        page.write_text(written(name, page.read_text(encoding="utf-8"), make()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
