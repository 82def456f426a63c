"""The library installs as a package and works from a program outside this repository.

A wheel is built from the repository, installed into a fresh virtualenv (its dependencies are the test
venv's, reached through a .pth file, so nothing is downloaded), and examples/consumer_program.py is run
from a temporary folder under Pulumi's mocks: the components it imports come from the installed wheel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import install_wheel, run_ok

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_a_consumer_program_uses_the_components(tmp_path: Path) -> None:
    python, site = install_wheel(tmp_path)
    outside = tmp_path / "consumer"
    outside.mkdir()
    program = outside / "__main__.py"
    program.write_text((ROOT / "examples" / "consumer_program.py").read_text())
    where = run_ok(python, "-c", "import components; print(components.__file__)", cwd=outside)
    assert Path(where.strip()).is_relative_to(site), f"components imported from {where}, not the wheel"

    registered = json.loads(run_ok(python, program, cwd=outside).strip().splitlines()[-1])
    types = [r["type"] for r in registered]
    assert "gcp-training:index:TrainingBuckets" in types
    assert types.count("gcp:storage/bucket:Bucket") == 2
    assert any(t.endswith("TrainingJob") for t in types), types
