"""The library installs as a package and works from a program outside this repository.

A wheel is built from the repository, installed into a fresh virtualenv (its dependencies are the test
venv's, reached through a .pth file, so nothing is downloaded), and examples/consumer_program.py is run
from a temporary folder under Pulumi's mocks: the components it imports come from the installed wheel.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*cmd: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done.stdout


def install_wheel(tmp_path: Path) -> tuple[Path, Path]:
    """A wheel of the repository installed into a fresh virtualenv under `tmp_path`: (its python, its site)."""
    source = tmp_path / "source"  # built from a copy: setuptools writes build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "components", source / "components", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, source)
    wheel = next(dist.glob("gcp_training_jobs-*.whl"))

    fresh = tmp_path / "fresh"
    _run(sys.executable, "-m", "venv", "--without-pip", fresh)
    python = fresh / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)
    return python, site


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return install_wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_installs_and_a_consumer_program_uses_the_components(tmp_path: Path,
                                                                  installed: tuple[Path, Path]) -> None:
    python, site = installed
    outside = tmp_path / "consumer"
    outside.mkdir()
    program = outside / "__main__.py"
    program.write_text((ROOT / "examples" / "consumer_program.py").read_text())
    where = _run(python, "-c", "import components; print(components.__file__)", cwd=outside)
    assert Path(where.strip()).is_relative_to(site), f"components imported from {where}, not the wheel"

    registered = json.loads(_run(python, program, cwd=outside).strip().splitlines()[-1])
    types = [r["type"] for r in registered]
    assert "gcp-training:index:TrainingBuckets" in types
    assert types.count("gcp:storage/bucket:Bucket") == 2
    assert any(t.endswith("TrainingJob") for t in types), types


def test_the_wheel_ships_its_types_and_mypy_checks_a_consumer_against_them(tmp_path: Path,
                                                                          installed: tuple[Path, Path]) -> None:
    """PEP 561: `py.typed` in the wheel, so mypy reads the library's hints in a consumer's program (no "missing
    library stubs or py.typed marker"), and a wrong argument is a type error there, before any run."""
    python, site = installed
    assert (site / "components" / "py.typed").is_file()
    outside = tmp_path / "consumer"
    outside.mkdir()
    (outside / "good.py").write_text((ROOT / "examples" / "consumer_program.py").read_text())
    (outside / "bad.py").write_text("from components import TrainingJobArgs\n\n"
                                    "TrainingJobArgs(project='p', job={}, retries='three')\n")
    mypy = [sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
            "--ignore-missing-imports", "--follow-imports=silent"]
    good = subprocess.run([*mypy, "good.py"], cwd=outside, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([*mypy, "bad.py"], cwd=outside, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and 'Argument "retries" to "TrainingJobArgs" has incompatible type "str"' \
        in bad.stdout, bad.stdout + bad.stderr
