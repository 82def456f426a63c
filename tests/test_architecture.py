"""The layout's import rules (ARCHITECTURE.md), checked on the source: every module of every layer.

- jobspec is pure: standard library, pydantic and yaml, and jobspec itself;
- backends import jobspec (and Google's client libraries), never resources, cli or the emulator;
- resources import jobspec and backends (and Pulumi), never cli or the emulator;
- the emulator is standard library only (plus its own modules): it plays Google's side;
- testing (the emulator as a tool for users' tests) imports the emulator, pytest and Google's clients only;
- no import cycle between modules (an import at module level, in a function or under TYPE_CHECKING counts alike),
  and no module over 600 lines.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gcp_training_jobs"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}

#: layer -> (project layers it may import, third-party top-level packages it may import)
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "jobspec": ({"jobspec"}, {"pydantic", "yaml"}),
    "backends": ({"jobspec", "backends"}, {"googleapiclient", "google", "google_auth_httplib2", "httplib2"}),
    "resources": ({"jobspec", "backends", "resources"}, {"pulumi", "pulumi_gcp", "pydantic", "yaml", "grpc"}),
    "emulator": ({"emulator"}, set()),
    # the emulator as a tool for users' tests: pytest fixtures and Google's clients, each imported when used
    "testing": ({"emulator", "testing"}, {"pytest", "google", "googleapiclient"}),
    "cli": ({"jobspec", "backends", "resources", "emulator", "cli"}, {"pulumi", "pydantic", "yaml"}),
    # code the library deploys to run on Google's side (the budget's stop function): uploaded on its own, so it
    # imports no module of the project, only what its runtime and its requirements.txt give
    "deployed": (set(), {"googleapiclient", "google"}),
}
#: The folders of deployed code (layer "deployed").
DEPLOYED = ("gcp_training_jobs.resources.budget_stop",)


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


def _imports(path: Path, known: Mapping[str, Path] = MODULES) -> list[str]:
    """Every module imported anywhere in the file (functions and TYPE_CHECKING blocks included), as absolute
    dotted names; `from package import name` names the submodule when `known` has one of that name."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known]
            names += submodules
            if len(submodules) < len(node.names):  # names defined in the module itself
                names.append(node.module)
    return names


def _layer(module: str) -> str | None:
    if module.startswith(DEPLOYED):
        return "deployed"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "gcp_training_jobs" else None


def wrong_imports(module: str, path: Path) -> list[str]:
    """What `module` (at `path`) imports that its layer may not."""
    layers, third_party = ALLOWED[_layer(module) or ""]
    wrong = []
    for name in _imports(path):
        top = name.split(".")[0]
        if top == "gcp_training_jobs":
            if _layer(name) not in layers:
                wrong.append(name)
        elif top not in STDLIB and top not in third_party:
            wrong.append(name)
    return wrong


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in ALLOWED))
def test_module_imports_only_what_its_layer_may(module: str) -> None:
    wrong = wrong_imports(module, MODULES[module])
    layers, third_party = ALLOWED[_layer(module) or ""]
    assert not wrong, f"{module} imports {wrong}; its layer may import {sorted(layers)} and {sorted(third_party)}"


#: jobspec's stages in the order data flows through them (ARCHITECTURE.md): a stage imports only itself and the
#: stages before it, never one after.
STAGES = ("core", "catalog", "io", "vocab", "translate", "rules", "render", "review", "load")


def _stage(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["gcp_training_jobs", "jobspec"]:
        return None
    return STAGES.index(parts[2]) if parts[2] in STAGES else None


def backward_imports(module: str, path: Path) -> list[str]:
    """The jobspec modules `module` imports from a later stage than its own."""
    own = _stage(module)
    return [] if own is None else [n for n in _imports(path) if (s := _stage(n)) is not None and s > own]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _stage(m) is not None))
def test_jobspec_stages_import_only_earlier_stages(module: str) -> None:
    wrong = backward_imports(module, MODULES[module])
    assert not wrong, f"{module} (stage {STAGES[_stage(module) or 0]}) imports later stages: {wrong}"


def stage_numbers(architecture: str, packages: Mapping[str, str]) -> dict[str, tuple[int | None, int | None]]:
    """Each stage's number (ARCHITECTURE.md's list, its package's docstring "Stage N, ..."), where either differs
    from its place in STAGES."""
    import re

    listed = {m.group(2): int(m.group(1)) for m in re.finditer(r"^(\d)\. `(\w+)(?:/|\.py)`", architecture, re.M)}
    wrong = {}
    for place, stage in enumerate(STAGES, 1):
        docstring = packages.get(stage)
        said = re.match(r"Stage (\d+),", docstring) if docstring is not None else None
        numbers = (listed.get(stage), int(said.group(1)) if said else None if docstring is not None else place)
        if numbers != (place, place):
            wrong[stage] = numbers
    return wrong


def _stage_docstrings() -> dict[str, str]:
    found = {}
    for stage in STAGES:
        path = PACKAGE / "jobspec" / stage / "__init__.py"
        if path.exists():
            found[stage] = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return found


def test_the_stages_are_numbered_alike_in_architecture_md_and_the_packages() -> None:
    wrong = stage_numbers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"), _stage_docstrings())
    assert not wrong, f"stage -> (ARCHITECTURE.md's number, its package docstring's), where not its place: {wrong}"


def test_the_stage_number_check_catches_a_misnumbered_stage() -> None:
    architecture = "\n".join(f"{n}. `{s}{'.py' if s == 'load' else '/'}`: ..." for n, s in enumerate(STAGES, 1))
    docstrings = {s: f"Stage {n}, {s}: ..." for n, s in enumerate(STAGES, 1) if s != "load"}
    assert stage_numbers(architecture, docstrings) == {}
    docstrings["io"] = "Stage 1, read: ..."
    assert stage_numbers(architecture.replace("5. `translate/`", "4. `translate/`"), docstrings) == {
        "io": (3, 1), "translate": (4, 5)}


def test_jobspec_has_at_most_eight_flat_modules() -> None:
    flat = sorted(p.name for p in (PACKAGE / "jobspec").glob("*.py"))
    assert len(flat) <= 8, flat


def test_cli_has_at_most_twelve_flat_modules_and_its_folders_load_nothing() -> None:
    """The commands live in folders (plan/, diff/, live/); a folder's __init__ imports nothing, so importing one of
    its modules never loads the rest of the folder."""
    flat = sorted(p.name for p in (PACKAGE / "cli").glob("*.py"))
    assert len(flat) <= 12, flat
    for init in (PACKAGE / "cli").glob("*/__init__.py"):
        body = ast.parse(init.read_text(encoding="utf-8")).body
        assert all(isinstance(node, ast.Expr) for node in body), init  # a docstring only


def test_the_checks_catch_a_forbidden_import_and_a_backward_stage(tmp_path: Path) -> None:
    """The checkers themselves, on modules written for the test: each rule rejects what it forbids."""
    pure = tmp_path / "pure.py"
    pure.write_text("import pulumi\nfrom gcp_training_jobs.resources.stack import build_stack\nimport yaml\n")
    assert wrong_imports("gcp_training_jobs.jobspec.rules.bad", pure) == ["pulumi", "gcp_training_jobs.resources.stack"]
    emulator = tmp_path / "emulator.py"
    emulator.write_text("from gcp_training_jobs.jobspec import catalog\nimport json\n")
    assert wrong_imports("gcp_training_jobs.emulator.bad", emulator) == ["gcp_training_jobs.jobspec.catalog"]
    backward = tmp_path / "backward.py"
    backward.write_text("from gcp_training_jobs.jobspec.render.bodies import render_judged\n"
                        "from gcp_training_jobs.jobspec.core.problems import Problem\n")
    assert backward_imports("gcp_training_jobs.jobspec.translate.bad", backward) == [
        "gcp_training_jobs.jobspec.render.bodies"]
    assert backward_imports("gcp_training_jobs.jobspec.review.fine", backward) == []


def import_cycles(modules: Mapping[str, Path]) -> list[list[str]]:
    """The import cycles among `modules` (name -> file): each group of modules that reach one another through the
    imports their files name (sorted), found as the strongly connected components of the import graph. An
    import's parent packages are not edges: Python runs them first, and a package re-exporting its modules is
    not a cycle."""
    graph = {m: sorted({n for n in _imports(p, modules) if n in modules and n != m}) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        for name in graph[module]:
            if name not in index:
                visit(name)
                low[module] = min(low[module], low[name])
            elif name in stack:
                low[module] = min(low[module], index[name])
        if low[module] == index[module]:
            group = []
            while True:
                name = stack.pop()
                group.append(name)
                if name == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_no_import_cycle() -> None:
    cycles = import_cycles(MODULES)
    assert not cycles, f"modules that import one another: {cycles}"


def test_the_cycle_check_catches_a_cycle_through_a_function_or_type_checking(tmp_path: Path) -> None:
    """On modules written for the test: a module-level import one way and a function-level or TYPE_CHECKING
    import back are each a cycle; one-way imports are not."""
    files = {"pkg.jobs": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.models import Spec\n",
             "pkg.models": "from pkg import jobs\n",
             "pkg.render": "def body():\n    from pkg.load import judge\n    return judge\n",
             "pkg.load": "from pkg.render import body\nfrom pkg.models import Spec\n",
             "pkg.leaf": "import json\nfrom pkg.models import Spec\n"}
    modules = {}
    for name, text in files.items():
        modules[name] = tmp_path / f"{name}.py"
        modules[name].write_text(text)
    assert import_cycles(modules) == [["pkg.jobs", "pkg.models"], ["pkg.load", "pkg.render"]]
    del modules["pkg.render"], modules["pkg.jobs"]
    assert import_cycles(modules) == []


def imported_test_modules(path: Path) -> list[str]:
    """The test modules (tests/test_*.py) a file imports: shared fixtures live in a conftest, helpers in
    tests/helpers.py, so that a test module never depends on another's."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return sorted({n for n in names if n.split(".")[:1] == ["tests"] and n.split(".")[-1].startswith("test_")})


def test_no_test_module_imports_another() -> None:
    found = {str(p.relative_to(ROOT)): names for p in sorted((ROOT / "tests").rglob("*.py"))
             if (names := imported_test_modules(p))}
    assert not found, f"test modules imported by other test files (move what they share to a conftest or " \
                      f"tests/helpers.py): {found}"


def test_the_test_import_check_catches_one_test_module_importing_another(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text("from tests.test_training_job import l4_spot\nfrom tests import test_cost\n"
                    "from tests.helpers import FakeClock\nimport tests.conftest\n")
    assert imported_test_modules(path) == ["tests.test_cost", "tests.test_training_job"]


#: The modules that speak Pulumi's provider protocol (the provider package): its protos and Google's common protos both
#: define `google.rpc.Status`, and one process's descriptor pool holds one, so they are imported in a process apart.
PROTOCOL = "gcp_training_jobs.resources.package"


def stray_errors(module: Any, source: str) -> list[str]:
    """The exception classes a module defines (by its source) that do not derive from TrainingJobsError."""
    from gcp_training_jobs.jobspec.core.errors import TrainingJobsError

    strays = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name, None)
            if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, TrainingJobsError):
                strays.append(f"{module.__name__}.{node.name}")
    return strays


def test_every_error_the_project_raises_derives_from_the_one_base() -> None:
    """ARCHITECTURE.md: callers catch TrainingJobsError (the emulator plays Google and is not the library; the budget's
    stop function is deployed on its own and can import no module of the project, the base included)."""
    strays, apart = [], []
    for module in sorted(MODULES):
        if _layer(module) in (None, "emulator", "deployed") or module.endswith("__main__"):
            continue
        if module.startswith(PROTOCOL):
            apart.append(module)
            continue
        strays += stray_errors(importlib.import_module(module), MODULES[module].read_text(encoding="utf-8"))
    if apart:  # in a process of their own (tests/test_provider_package.py says why)
        code = ("import importlib, sys\nfrom pathlib import Path\nfrom tests.test_architecture import stray_errors\n"
                "print('\\n'.join(s for m in sys.argv[1:] for s in stray_errors(importlib.import_module(m), "
                "Path(importlib.import_module(m).__file__).read_text(encoding='utf-8'))))")
        done = subprocess.run([sys.executable, "-c", code, *apart], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        strays += done.stdout.split()
    assert not strays, f"errors outside TrainingJobsError: {strays}"


def test_the_error_check_catches_a_stray_error_class(tmp_path: Path) -> None:
    source = ("from gcp_training_jobs.jobspec.core.errors import SpecError\n"
              "class Stray(RuntimeError):\n    pass\n"
              "class Fine(SpecError):\n    pass\n")
    path = tmp_path / "strays.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("strays", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert stray_errors(module, source) == ["strays.Stray"]


def test_no_module_is_longer_than_one_reader_holds_in_mind() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"modules over 600 lines: {long}"


def test_rendering_judges_nothing() -> None:
    """ARCHITECTURE.md, render/: "Rendering judges nothing": no module of jobspec/render calls a rule. What it may
    take from jobspec/rules is data (upper-case names: the tuning rules' defaults and paths), never a function."""
    called = [(path.name, alias.name) for path in sorted((PACKAGE / "jobspec" / "render").glob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gcp_training_jobs.jobspec.rules")
              for alias in node.names if not alias.name.isupper()]
    assert called == []


def test_the_stack_program_never_imports_the_plugins_protocol_beside_googles_clients() -> None:
    """A stack program imports Google's clients (googleapis-common-protos' google.rpc.Status) and the library; the
    provider plugin's protocol (pulumi.provider, whose own copy of google/rpc/status.proto registers the same
    symbol) is the plugin's alone: imported by the program, the two clash ("duplicate symbol 'google.rpc.Status'")."""
    code = ("import google.rpc.status_pb2, sys\n"
            "import gcp_training_jobs.resources.stack\n"
            "print(sorted(m for m in sys.modules if m.startswith('pulumi.provider')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
