"""The hardware reference page's table, written from the Vertex AI catalog, so the page cannot restate it wrongly.

    venv/bin/python scripts/hardware_table.py            # print the table
    venv/bin/python scripts/hardware_table.py --write    # put it into docs/reference/hardware.md, replacing the old one

tests/test_readme_hardware.py holds docs/reference/hardware.md to this output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gcp_training_jobs.jobspec.catalog import vertex_machines as machines  # noqa: E402
from gcp_training_jobs.jobspec.catalog import vertex_regions as regions  # noqa: E402

PAGE = ROOT / "docs" / "reference" / "hardware.md"
HEADER = ("| machine types | accelerator per VM (fixed by the type unless noted) | regions offering it for training |\n"
          "|---|---|---|")
#: The page's label of each accelerator (the locations page's names), for the TPU rows.
LABELS = {enum: label for label, enum in regions.ACCELERATOR_LABELS.items()}


def _family(machine: str) -> str:
    return machine.rsplit("-", 1)[0]


def _types(names: Sequence[str]) -> str:
    """`a3-highgpu-1g`, `-2g`, `-8g` (one family), `a2-highgpu-1g` ... `-8g` (more than three), families joined."""
    parts = []
    for members in _grouped(names, _family).values():
        tails = [f"`-{m.rsplit('-', 1)[1]}`" for m in members[1:]]
        if len(members) > 3:
            parts.append(f"`{members[0]}` ... {tails[-1]}")
        else:
            parts.append(", ".join([f"`{members[0]}`", *tails]))
    return ", ".join(parts)


def _grouped(items: Iterable[str], key: Callable[[str], str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for item in items:
        found.setdefault(key(item), []).append(item)
    return found


def _numbers(values: Iterable[int]) -> str:
    ordered = [str(v) for v in sorted(set(values))]
    return ordered[0] if len(ordered) == 1 else f"{', '.join(ordered[:-1])} or {ordered[-1]}"


def _where(found: Sequence[str]) -> str:
    """How many training regions, named when one or two."""
    if len(found) == 1:
        return found[0]
    return f"{len(found)} ({', '.join(found)})" if len(found) == 2 else str(len(found))


def _regions_of(accelerator: str) -> list[str]:
    return [r for r in regions.TRAINING_REGIONS if accelerator in regions.REGION_ACCELERATORS[r]]


def _regions_of_label(label: str) -> list[str]:
    return [r for r in regions.TRAINING_REGIONS if label in regions.UNMAPPED_ACCELERATORS.get(r, ())]


def _until(accelerator: str) -> str:
    end = machines.GPU_END_OF_SUPPORT.get(accelerator)
    return f" (until {end.isoformat()})" if end else ""


def rows() -> list[str]:
    """The table's rows: fixed-GPU machines by accelerator, N1 with attached GPUs, CPU types, Cloud TPU, TPU VMs."""
    lines = []
    fixed = _grouped(machines.FIXED_ACCELERATOR_MACHINES, lambda m: machines.FIXED_ACCELERATOR_MACHINES[m].accelerator)
    for accelerator, names in fixed.items():
        counts = _numbers(machines.FIXED_ACCELERATOR_MACHINES[m].count for m in names)
        note = " (capacity from shared reservations only)" if accelerator in machines.GPU_RESERVATION_REQUIRED else ""
        lines.append(f"| {_types(names)} | {counts} `{accelerator}`{note} | {_where(_regions_of(accelerator))} |")
    n1_gpus = list(dict.fromkeys(g for counts in machines.N1_GPU_COUNTS.values() for g in counts))
    lines.append(
        f"| {', '.join(f'`{f}-*`' for f in _grouped(machines.N1_GPU_COUNTS, _family))} | attached, in the counts of "
        f"the configure-compute table: {', '.join(f'`{g}`{_until(g)}' for g in n1_gpus)} | "
        f"{', '.join(f'{LABELS[g]}: {len(_regions_of(g))}' for g in n1_gpus)} |")
    cpu_families = dict.fromkeys(m.split("-", 1)[0] for m in machines.CPU_MACHINE_TYPES)
    lines.append(f"| {', '.join(f'`{f}-*`' for f in cpu_families)} | none (CPU) | all "
                 f"{len(regions.TRAINING_REGIONS)} training regions |")
    tpus = machines.CLOUD_TPU_ACCELERATOR_COUNTS
    pods = "; ".join(f"{t}: {rule}" for t, rule in machines.CLOUD_TPU_POD_COUNT_RULE.items())
    pod_regions = {t: [r for r in regions.TRAINING_REGIONS if t in regions.REGION_TPU_PODS.get(r, ())] for t in tpus}
    lines.append(f"| `{machines.CLOUD_TPU_MACHINE}` | {' / '.join(f'`{t}`' for t in tpus)}: "
                 f"{machines.CLOUD_TPU_SINGLE_COUNT} cores, or a Pod ({pods}) | "
                 f"{', '.join(f'{t}: {len(_regions_of(t))}' for t in tpus)}; Pods "
                 f"{', '.join(f'{t}: {_where(found)}' for t, found in pod_regions.items())} |")
    for family, names in _grouped(machines.TPU_HOSTS, _family).items():
        accelerator = machines.TPU_HOSTS[names[0]].accelerator
        label = LABELS[accelerator] if accelerator else next(
            v for k, v in regions.UNMAPPED_MACHINE_LABELS.items() if family.startswith(k))
        shapes = dict.fromkeys(t for n in names for t in machines.TPU_HOSTS[n].topologies)
        found = _regions_of(accelerator) if accelerator else _regions_of_label(label)
        enum = f" (`{accelerator}`)" if accelerator else ""
        lines.append(f"| {_types(names)} | {label}{enum}, `tpuTopology` {', '.join(shapes)} | {_where(found)} |")
    return lines


def table() -> str:
    return "\n".join([HEADER, *rows()]) + "\n"


def page_table(text: str) -> str:
    """The hardware table as the page has it: the lines from its header to the first line not in the table."""
    start = text.index(HEADER)
    end = text.find("\n\n", start)
    return text[start:end + 1 if end != -1 else len(text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the table in docs/reference/hardware.md")
    args = parser.parse_args(argv)
    if not args.write:
        sys.stdout.write(table())
        return 0
    text = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(text.replace(page_table(text), table()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
