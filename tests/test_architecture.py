"""The layout's import rules (ARCHITECTURE.md), checked on the source: every module of every layer.

- jobspec is pure: standard library, pydantic and yaml, and jobspec itself;
- backends import jobspec (and Google's client libraries), never resources, cli or the emulator;
- resources import jobspec and backends (and Pulumi), never cli or the emulator;
- the emulator is standard library only (plus its own modules): it plays Google's side;
- no import cycle between modules, and no module over 600 lines.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "components"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}

#: layer -> (project layers it may import, third-party top-level packages it may import)
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "jobspec": ({"jobspec"}, {"pydantic", "yaml"}),
    "backends": ({"jobspec", "backends"}, {"googleapiclient", "google", "google_auth_httplib2", "httplib2"}),
    "resources": ({"jobspec", "backends", "resources"}, {"pulumi", "pulumi_gcp", "pydantic", "yaml"}),
    "emulator": ({"emulator"}, set()),
    "cli": ({"jobspec", "backends", "resources", "emulator", "cli"}, {"pulumi", "pydantic", "yaml"}),
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[str]:
    """Every module imported anywhere in the file (functions included), as absolute dotted names."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES]
            names += submodules
            if len(submodules) < len(node.names):  # names defined in the module itself
                names.append(node.module)
    return names


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "components" else None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in ALLOWED))
def test_module_imports_only_what_its_layer_may(module: str) -> None:
    layers, third_party = ALLOWED[_layer(module) or ""]
    wrong = []
    for name in _imports(MODULES[module]):
        top = name.split(".")[0]
        if top == "components":
            if _layer(name) not in layers:
                wrong.append(name)
        elif top not in STDLIB and top not in third_party:
            wrong.append(name)
    assert not wrong, f"{module} imports {wrong}; its layer may import {sorted(layers)} and {sorted(third_party)}"


def test_no_import_cycle_between_modules() -> None:
    graph = {m: {n for n in _imports(p) if n in MODULES and n != m} for m, p in MODULES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_the_checks_above_see_a_forbidden_import() -> None:
    """The checker itself: a pure module that imported pulumi would be caught."""
    path = MODULES["components.jobspec.vocab.training_input"]
    assert "pydantic" in {n.split(".")[0] for n in _imports(path)}
    layers, third_party = ALLOWED["jobspec"]
    assert "pulumi" not in third_party and "resources" not in layers


def test_no_module_is_longer_than_one_reader_holds_in_mind() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"modules over 600 lines: {long}"
