"""The hardware reference page's table is the catalog's: scripts/hardware_table.py writes it from the Vertex AI
tables, and docs/reference/hardware.md must hold exactly that output (run `venv/bin/python
scripts/hardware_table.py --write` after a catalog change)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import script

ROOT = Path(__file__).resolve().parent.parent


SCRIPT = script("hardware_table")
PAGE = ROOT / "docs" / "reference" / "hardware.md"


def test_the_page_holds_the_table_the_catalog_writes() -> None:
    readme = PAGE.read_text(encoding="utf-8")
    assert SCRIPT.page_table(readme) == SCRIPT.table(), \
        "docs/reference/hardware.md's table is not the catalog's: run venv/bin/python scripts/hardware_table.py --write"


def test_a_table_that_drifts_from_the_catalog_is_caught() -> None:
    readme = PAGE.read_text(encoding="utf-8")
    drifted = readme.replace("| 8 `NVIDIA_B200` | 9 |", "| 8 `NVIDIA_B200` | 10 |")
    assert drifted != readme
    assert SCRIPT.page_table(drifted) != SCRIPT.table()
    extra = readme.replace(SCRIPT.table(), SCRIPT.table() + "| `a9-made-up` | 1 `NVIDIA_X` | 1 |\n")
    assert SCRIPT.page_table(extra) != SCRIPT.table()


def test_the_table_names_every_machine_type_of_the_catalog() -> None:
    from gcp_training_jobs.jobspec.catalog import vertex_machines

    table = SCRIPT.table()
    families = {name.rsplit("-", 1)[0] for name in (*vertex_machines.FIXED_ACCELERATOR_MACHINES,
                                                     *vertex_machines.TPU_HOSTS)}
    assert all(f"`{family}-" in table for family in families)
    assert all(f"`{name.split('-')[0]}-*`" in table for name in vertex_machines.CPU_MACHINE_TYPES)
