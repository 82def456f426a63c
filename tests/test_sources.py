"""Facts come from sources anyone can open: every catalog `Source` is a public https page (a repository file names
its commit), and no tracked file cites how a page was reached (a search tool, its index or its ids)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
from datetime import date
from pathlib import Path

import pytest

from components.jobspec import catalog
from components.jobspec.catalog.source import Source

ROOT = Path(__file__).resolve().parent.parent

#: Words that cite a private search index instead of a page: the tool, its index, its copies and its ids.
UNOPENABLE = re.compile(
    r"code[- ]search|code[- ]index|search (?:index|corpus|tool)|\bcorpus\b|file ids?\b|stored cop(?:y|ies)"
    r"|documentation dump|markdown (?:dump|copy)|\bids? \d{9,}",
    re.IGNORECASE)


def unopenable(text: str) -> list[str]:
    """Each line of `text` that cites how a source was reached rather than where it is."""
    return [line.strip() for line in text.splitlines() if UNOPENABLE.search(line)]


@pytest.mark.parametrize("line", [
    "via=\"code search corpus, file id 55061815695 (docs.cloud.google.com markdown dump); whole page read\"",
    "search corpus (code): stored copy of the page in a documentation dump",
    "the price_check script quoting them, code-index file id 69083071661",
    "persistentResources.create in a notebook on GitHub, code corpus id 33677621252",
    "generated from the search index's stored copy of the file at that commit",
])
def test_the_check_finds_a_citation_of_the_search_tool(line: str) -> None:
    assert unopenable(f"first line\n{line}\nlast line") == [line]


def test_the_check_passes_an_openable_citation() -> None:
    text = ('url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/locations",\n'
            'repository="GoogleCloudPlatform/vertex-ai-samples", commit="1ab9e4b6e3845ab6d58a4d4ce797288af1f6972b"\n'
            'network="projects/123456789012/global/networks/vpc"  # a project number, not an id of a copy')
    assert unopenable(text) == []


def test_no_tracked_file_cites_a_search_tool() -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in tracked.decode().split("\0"):
        path = ROOT / name
        if not name or path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a binary file
            continue
        found += [f"{name}: {line}" for line in unopenable(text)]
    assert found == [], "cite the public page (https URL, title, date read), not how it was reached:\n" + \
        "\n".join(found)


def _catalog_sources() -> dict[str, Source]:
    found = {}
    for module in pkgutil.iter_modules(catalog.__path__):
        loaded = importlib.import_module(f"{catalog.__name__}.{module.name}")
        found.update({f"{module.name}.{k}": v for k, v in vars(loaded).items() if isinstance(v, Source)})
    return found


def test_every_catalog_source_is_a_public_page_with_its_date() -> None:
    sources = _catalog_sources()
    assert len(sources) >= 15  # the tables' sources, found in every catalog module
    for name, source in sources.items():
        assert source.title, name
        assert source.url.startswith("https://"), f"{name}: {source.url!r} is not an https address"
        assert isinstance(source.read, date), name
        if source.repository:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", source.repository), name
            assert re.fullmatch(r"[0-9a-f]{40}", source.commit), f"{name}: a repository file names its commit"
            assert source.repository in source.url and source.commit in source.url, name
