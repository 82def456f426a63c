"""The documentation site: its generated reference tables are the code's (scripts/reference_pages.py writes the
environment variables from EnvSettings and the commands from the command line's parser; the hardware table has its
own test), every page is in the navigation, and README.md is the front page that links to them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gcp_training_jobs.jobspec.core.env import ALLOWED, MEANINGS, VARIABLES
from tests.helpers import script

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


SCRIPT = script("reference_pages")


@pytest.mark.parametrize("name", sorted(SCRIPT.TABLES))
def test_each_generated_page_holds_its_generators_table(name: str) -> None:
    page, make = SCRIPT.TABLES[name]
    assert SCRIPT.marked(name, page.read_text(encoding="utf-8")) == make(), \
        f"{page.relative_to(ROOT)} differs from the code: run venv/bin/python scripts/reference_pages.py --write"


def test_a_drifted_table_is_caught_and_rewritten() -> None:
    page, make = SCRIPT.TABLES["environment"]
    text = page.read_text(encoding="utf-8")
    drifted = text.replace("| 60 |", "| 30 |")
    assert drifted != text and SCRIPT.marked("environment", drifted) != make()
    assert SCRIPT.written("environment", drifted, make()) == text


def test_the_environment_page_names_every_variable_once() -> None:
    table = SCRIPT.environment_table()
    assert sorted(re.findall(r"^\| `(GCP_TRAINING_JOBS_[A-Z_]+)`", table, re.M)) == sorted(VARIABLES.values())
    assert all(MEANINGS[field].strip() and ALLOWED[field].strip() for field in VARIABLES)  # each field says both


def test_the_commands_page_names_every_command_and_option() -> None:
    from gcp_training_jobs.cli.main import parser

    table = SCRIPT.commands_table()
    for name in ("validate", "render", "plan", "diff", "emulator", "prices", "prices refresh", "status", "logs",
                 "spend"):
        assert f"\n### {name}\n" in "\n" + table, name
    top = parser()
    (sub,) = [a for a in top._actions if a.dest == "command"]
    for command, its in sub.choices.items():
        for action in its._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in table, f"{command} {option}"


def nav_pages(entries: list) -> list[str]:
    found: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found += nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # !!python/name stays text
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "snippets" not in p.parts}
    assert sorted(nav_pages(config["nav"])) == sorted(pages)


def test_the_readme_is_a_front_page_that_names_every_page_by_its_path() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    linked = set(re.findall(r"\(`(docs/[^`#]+\.md)`\)", readme))
    pages = {f"docs/{p.relative_to(DOCS)}" for p in DOCS.rglob("*.md") if "snippets" not in p.parts}
    assert linked == pages, sorted(pages ^ linked)
    # The README is also the package's page on PyPI, where a link relative to the repository does not resolve: every
    # link is an absolute address, and a page of the repository is named by its path.
    assert not [target for target in re.findall(r"\]\(([^)]+)\)", readme) if not target.startswith("https://")]
