"""Facts come from sources anyone can open: every catalog `Source` is a public https page (a repository file names
its commit), every table of the AI Platform Training catalog names its own, no Source cites a name nothing
defines (the old "seed 000/001" for Google's GPU and TPU guides), and no tracked file cites how a page was
reached (a search tool, its index or its ids)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.source import Source

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


# --- Every table names its Source -----------------------------------------------------------------------------

#: Catalog modules whose every table names its own Sources, beside it: `<TABLE>_SOURCES` (a tuple of Source).
PER_TABLE = ("accelerators", "legacy", "machines", "regions", "runtimes", "vertex_legacy")
#: Catalog modules that name their Sources once for the module (SOURCE_*), each table's comment saying which.
PER_MODULE = ("credentials", "quotas", "vertex_containers", "vertex_jobspec", "vertex_machines", "vertex_regions")
#: Catalog modules that hold no table of their own, and why.
NO_TABLE = {
    "ai_platform_pages": "the Sources themselves",
    "source": "the Source type",
    "prices": "the lookup; its table is prices_table.json, whose `sources` name each snapshot's repository and commit",
    "prices_build": "the script that writes prices_table.json from the snapshots it names",
    "prices_refresh": "the refresh from the Cloud Billing Catalog API",
    "replacements": "a choice over vertex_machines' tables (named in its docstring), not a fact read from a page",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{catalog.__name__}.{name}")


def _is_table(value: Any) -> bool:
    return isinstance(value, (tuple, frozenset, Mapping)) and not (
        isinstance(value, tuple) and value and all(isinstance(v, Source) for v in value))


def tables_without_sources(module: ModuleType) -> list[str]:
    """The tables `module` defines (its own public top-level UPPER_CASE names bound to a tuple, frozenset or
    mapping) that name no `<TABLE>_SOURCES` tuple of Sources beside them."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    names = [target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(target, ast.Name) and target.id.isupper() and not target.id.startswith("_")
             and not target.id.endswith("_SOURCES")]
    missing = []
    for name in names:
        if not _is_table(getattr(module, name)):
            continue
        sources = getattr(module, f"{name}_SOURCES", None)
        if not (isinstance(sources, tuple) and sources and all(isinstance(s, Source) for s in sources)):
            missing.append(name)
    return missing


def test_every_catalog_module_is_sorted_into_one_kind() -> None:
    modules = {m.name for m in pkgutil.iter_modules(catalog.__path__)}
    kinds = [*PER_TABLE, *PER_MODULE, *NO_TABLE]
    assert len(kinds) == len(set(kinds))
    assert modules == set(kinds), "a new catalog module names its sources: add it to PER_TABLE"


@pytest.mark.parametrize("name", PER_TABLE)
def test_every_table_names_its_sources(name: str) -> None:
    module = _module(name)
    assert tables_without_sources(module) == []
    assert any(name.endswith("_SOURCES") for name in vars(module))


@pytest.mark.parametrize("name", PER_MODULE)
def test_every_other_table_module_names_its_sources(name: str) -> None:
    assert [v for v in vars(_module(name)).values() if isinstance(v, Source)]


def test_the_table_check_finds_a_table_without_sources(tmp_path: Path) -> None:
    path = tmp_path / "sample_catalog.py"
    path.write_text("from gcp_training_jobs.jobspec.catalog.ai_platform_pages import SOURCE_USING_TPUS\n"
                    "TPU_REGIONS = ('us-central1',)\nTPU_REGIONS_SOURCES = (SOURCE_USING_TPUS,)\n"
                    "GPU_REGIONS = ('us-west1',)\nGPU_REGIONS_SOURCES = ()\nROLES = {'master': 1}\n"
                    "DEFAULT_TIER = 'BASIC'\n")
    module = ModuleType("sample_catalog")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)  # noqa: S102 - the sample above
    assert tables_without_sources(module) == ["GPU_REGIONS", "ROLES"]


# --- No Source cites a name nothing defines ------------------------------------------------------------------

#: A citation of the guides by the old private names ("seed 000", "seed 001", "the seeds' table") instead of the
#: page: a catalog Source's title or note never says "seed" at all.
SEED = re.compile(r"\bseeds?\b|\bseed'?s'?\b", re.IGNORECASE)


def seed_citations(source: Source) -> list[str]:
    """The fields of `source` that cite a "seed" rather than Google's page."""
    return [f"{field}: {text}" for field, text in (("title", source.title), ("url", source.url),
                                                  ("note", source.note)) if SEED.search(text)]


@pytest.mark.parametrize("note", [
    "seed 001, table 'Números válidos de GPUs para cada tipo de máquina'",
    "Seed 000 names 1.11 and 1.12",
    "the seeds' GPU table, transcribed",
    "the seed's BASIC_GPU tier",
])
def test_the_check_finds_a_seed_citation(note: str) -> None:
    source = Source(title="AI Platform Training: Using GPUs", url="https://cloud.google.com/ai-platform/training/"
                    "docs/using-gpus", read=date(2026, 11, 26), note=f"Whole page read. {note}.")
    assert seed_citations(source) == [f"note: Whole page read. {note}."]


def test_no_catalog_source_cites_a_seed() -> None:
    found = {name: seed_citations(source) for name, source in _catalog_sources().items()}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_no_catalog_module_cites_a_seed() -> None:
    """The tables' comments name Google's guide (the AI Platform Training GPU guide), not a "seed"."""
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted(Path(catalog.__path__[0]).glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if SEED.search(line)]
    assert found == []


def test_the_ai_platform_guides_are_cited_by_their_own_addresses() -> None:
    urls = {source.url for source in _catalog_sources().values()}
    assert {"https://cloud.google.com/ai-platform/training/docs/using-gpus",
            "https://cloud.google.com/ai-platform/training/docs/using-tpus"} <= urls
