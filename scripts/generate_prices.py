"""Generate gcp_training_jobs/jobspec/catalog/prices_table.json, the bundled price table, offline from two snapshots.

    venv/bin/python scripts/generate_prices.py --cyclenerd /tmp/prices_src/pricing.yml \\
        --skypilot /tmp/prices_src/vms.csv [--output PATH] [--today YYYY-MM-DD]

The two inputs are public snapshots of Google's price list (never committed here; keep them in /tmp):

1. Cyclenerd/google-cloud-pricing-cost-calculator, file ``pricing.yml`` at commit
   fd66b26ff84fee5cdd94f341ea89206e76c06b99 (its ``about.generated``: Thu Jul 30 06:13:17 2026; the newest
   snapshot no longer holds the file). Get it with ``git show fd66b26ff84fee5cdd94f341ea89206e76c06b99:pricing.yml``
   in a clone of https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator. It gives Compute Engine's
   list price per machine type and region, on demand (``hour``) and Spot (``hour_spot``), whole machines
   (a2, a3, g2, g4 with their GPUs). Used for every machine type it has.
2. skypilot-org/skypilot-catalog, file ``catalogs/v8/gcp/vms.csv`` at commit SKYPILOT_COMMIT (the file holds
   no generation date; read 2026-11-23): ``git show SKYPILOT_COMMIT:catalogs/v8/gcp/vms.csv`` in a clone of
   https://github.com/skypilot-org/skypilot-catalog. One row per zone. Used only for what the first lacks:
   the GPUs attached to N1 machines (T4, P4, P100, V100, priced per count) and Cloud TPU (tpu-v2-N and
   tpu-v3-N per core, tpu-v5litepod-N and tpu-v6e-N per chip). A row is never taken when it is a placeholder
   (price 0, or the 700 SkyPilot writes for v6e where it has no price) or when its per-unit price disagrees
   within a region across slice sizes of one tier; its H100, H100 Mega, H200, B200 and A100 80GB rows, which
   disagree across regions and with Google's figures, are never read. The bundled table was generated from
   the rows of those kinds in the file at that commit.

Checks before writing (the script stops if one fails): the evidence of the Vertex rules reproduces from the
inputs (Compute Engine n1-standard-4 us-central1 x 1.15 = 0.21849885; T4 us-central1 x 1.15 = 0.4025).

Coverage: every machine type and accelerator the Vertex AI catalog lists (vertex_machines), in every Vertex
AI training region (vertex_regions.TRAINING_REGIONS); a part the inputs do not price stays "unknown" with the
reason. The Vertex rule, the Spot and Flex-start billing and the region fallback are in
gcp_training_jobs/jobspec/catalog/prices_build.py, written into the table as labelled data.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gcp_training_jobs.jobspec.catalog import prices, prices_build, vertex_machines  # noqa: E402
from gcp_training_jobs.jobspec.catalog.prices_build import RULES_BY_ID, TableBuilder  # noqa: E402

CYCLENERD_COMMIT = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
SKYPILOT_COMMIT = "006059e0f18acb1341e22a27751e9f80df6ba92f"
SKYPILOT_READ = date(2026, 11, 23)
#: SkyPilot's stand-in price where it has none (TPU v6e in asia-east1, southamerica-east1, us-central2; Spot
#: in southamerica-west1): never a price.
SKYPILOT_PLACEHOLDER = 700.0
#: SkyPilot accelerator names -> the Vertex AI key, and how many units one row's count holds.
SKYPILOT_GPUS = {"T4": "NVIDIA_TESLA_T4", "P4": "NVIDIA_TESLA_P4", "P100": "NVIDIA_TESLA_P100",
                 "V100": "NVIDIA_TESLA_V100"}
SKYPILOT_TPUS = {"tpu-v2-": "TPU_V2", "tpu-v3-": "TPU_V3", "tpu-v5litepod-": "TPU_V5_LITEPOD", "tpu-v6e-": "TPU v6e"}
#: Cyclenerd's GPU keys in a machine's shape -> the Vertex AI accelerator.
CYCLENERD_GPUS = {"a100": "NVIDIA_TESLA_A100", "a100-80gb": "NVIDIA_A100_80GB", "h100-80gb": "NVIDIA_H100_80GB",
                  "h100-80gb-mega": "NVIDIA_H100_MEGA_80GB", "l4": "NVIDIA_L4", "rtx6000": "NVIDIA_RTX_PRO_6000"}


def sources(cyclenerd_generated: date, cyclenerd_commit: str, skypilot_commit: str) -> list[dict[str, Any]]:
    return [
        {"id": "cyclenerd", "title": "Google Cloud pricing (Compute Engine list prices from the Cloud Billing "
         "Catalog API)", "repo": "Cyclenerd/google-cloud-pricing-cost-calculator", "path": "pricing.yml",
         "commit": cyclenerd_commit, "generated": cyclenerd_generated.isoformat(),
         "url": "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator",
         "used_for": "machine types: compute.instance.<type>.cost.<region>.{hour, hour_spot}"},
        {"id": "skypilot", "title": "SkyPilot GCP catalog (per-zone VM, GPU and TPU prices)",
         "repo": "skypilot-org/skypilot-catalog", "path": "catalogs/v8/gcp/vms.csv", "commit": skypilot_commit,
         "generated": None, "read": SKYPILOT_READ.isoformat(), "url": "https://github.com/skypilot-org/skypilot-catalog",
         "used_for": "GPUs attached to N1 (T4, P4, P100, V100) and Cloud TPU (v2, v3, v5e, v6e); the file states "
                     "no generation date"},
        {"id": "vertex-page", "title": "Vertex AI pricing page figures (n1-standard-4, NVIDIA_H100_80GB)",
         "repo": "api-evangelist/google-vertex-ai", "path": "plans/google-vertex-ai-plans-pricing.yml",
         "commit": "342263c39279d72204c9e1bb3058dceba0d215e1", "generated": "2026-10-07",
         "url": "https://cloud.google.com/products/gemini-enterprise-agent-platform/pricing",
         "used_for": "evidence of the Vertex rule (vertex_rules)"},
    ]


def cyclenerd_date(data: dict[str, Any]) -> date:
    """about.generated, e.g. "Thu Jul 30 06:13:17 2026"."""
    return datetime.strptime(str(data["about"]["generated"]).strip(), "%a %b %d %H:%M:%S %Y").date()


def skypilot_rates(path: Path) -> tuple[dict[tuple[str, str], dict[int, tuple[float, float | None]]], list[str]]:
    """(Vertex key, region) -> {units per replica: (on-demand, Spot) per unit, the highest zone's}; and notes on
    the rows set aside and on zones that disagree."""
    zones: dict[tuple[str, str, int], list[tuple[float, float | None]]] = defaultdict(list)
    notes: list[str] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row.get("InstanceType"):
                continue
            name = row["AcceleratorName"]
            key, units = _accelerator(name, row["AcceleratorCount"])
            if key is None:
                continue
            price = float(row["Price"]) if row["Price"] else 0.0
            spot = float(row["SpotPrice"]) if row["SpotPrice"] else None
            if price <= 0 or price == SKYPILOT_PLACEHOLDER:
                notes.append(f"set aside {name} {row['AvailabilityZone']}: price {row['Price']!r} is a placeholder")
                continue
            if spot is not None and (spot <= 0 or spot == SKYPILOT_PLACEHOLDER):
                notes.append(f"Spot of {name} {row['AvailabilityZone']}: {row['SpotPrice']!r} is a placeholder")
                spot = None
            zones[(key, row["Region"], units)].append((price / units, None if spot is None else spot / units))
    rates: dict[tuple[str, str], dict[int, tuple[float, float | None]]] = defaultdict(dict)
    for (key, region, units), found in sorted(zones.items()):
        od = max(f[0] for f in found)
        spots = [f[1] for f in found]
        spot = None if any(s is None for s in spots) else max(s for s in spots if s is not None)
        if len({round(f[0], 9) for f in found}) > 1 or len({s for s in spots}) > 1:
            notes.append(f"zones of {region} disagree on {key} x{units}: {sorted(set(found), key=str)}; "
                         "took the highest")
        rates[(key, region)][units] = (od, spot)
    return rates, notes


def _accelerator(name: str, count: str) -> tuple[str | None, int]:
    if name in SKYPILOT_GPUS:
        return SKYPILOT_GPUS[name], int(count)
    for prefix, key in SKYPILOT_TPUS.items():
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return key, int(name[len(prefix):])
    return None, 0


def tiers(by_units: dict[int, tuple[float, float | None]]) -> list[tuple[tuple[float, float | None], list[int]]]:
    """Unit counts grouped by equal per-unit rates (TPU v2: one device's 8 cores, and Pod slices of 32+). The
    catalog rounds each row to 5 decimals, so per-unit rates within 0.00001 are one rate; a tier's rate is the
    highest of its counts'."""
    groups: list[tuple[list[tuple[float, float | None]], list[int]]] = []
    for units, rate in sorted(by_units.items()):
        for rates, counts in groups:
            if _same(rates[0][0], rate[0]) and _same(rates[0][1], rate[1]):
                rates.append(rate)
                counts.append(units)
                break
        else:
            groups.append(([rate], [units]))
    return [((max(r[0] for r in rates), _highest(r[1] for r in rates)), counts) for rates, counts in groups]


def _same(a: float | None, b: float | None) -> bool:
    return a is None and b is None or (a is not None and b is not None and abs(a - b) <= 1e-5)


def _highest(values: Any) -> float | None:
    found = list(values)
    return None if any(v is None for v in found) else max(found)


def check_evidence(instances: dict[str, Any], rates: dict[tuple[str, str], dict[int, Any]]) -> None:
    n1 = instances["n1-standard-4"]["cost"]["us-central1"]["hour"]
    t4 = rates[("NVIDIA_TESLA_T4", "us-central1")][1][0]
    for what, ce, page in (("n1-standard-4", n1, 0.21849885), ("NVIDIA_TESLA_T4", t4, 0.4025)):
        if not math.isclose(ce * 1.15, page, abs_tol=5e-9):
            raise SystemExit(f"evidence does not reproduce: {what} us-central1 {ce} x 1.15 != Google's {page}")


def build(cyclenerd: Path, skypilot: Path, today: date, cyclenerd_commit: str, skypilot_commit: str) -> tuple[
        dict[str, Any], list[str]]:
    data = yaml.load(cyclenerd.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    listed = cyclenerd_date(data)
    instances = data["compute"]["instance"]
    rates, notes = skypilot_rates(skypilot)
    check_evidence(instances, rates)
    table = TableBuilder("snapshot", today, sources(listed, cyclenerd_commit, skypilot_commit))
    regions = prices_build.training_regions()
    chip_rates = _accelerators(table, rates, regions, skypilot_commit)
    for name in prices_build.catalog_machines():
        _machine(table, name, instances.get(name), regions, listed, chip_rates)
    return table.to_dict(), notes


def _accelerators(table: TableBuilder, rates: dict[tuple[str, str], dict[int, Any]], regions: tuple[str, ...],
                  commit: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every catalog accelerator; returns the per-chip entries of the TPU VM hosts' chips by (key, region)."""
    chips: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key in sorted(prices_build.ACCELERATOR_UNITS):
        rule_id = prices_build.accelerator_rule(key)
        if key in prices_build.FIXED_MACHINE_ACCELERATORS:
            owners = sorted(m for m, f in vertex_machines.FIXED_ACCELERATOR_MACHINES.items() if f.accelerator == key)
            table.accelerator(key, None, f"priced with its machine type, whole machine with its GPUs: "
                                         f"{', '.join(owners)}")
            continue
        if rule_id is None:
            table.accelerator(key, None, prices_build.UNPRICED_FAMILIES["tpu7x-standard"])
            continue
        rule = RULES_BY_ID[rule_id]
        label = "Cloud TPU list" if rule_id == "tpu" else "Compute Engine list"
        basis = table.basis(f"{label} (SkyPilot catalog @ {commit[:7]}, read {SKYPILOT_READ}, highest "
                            f"zone){prices_build.markup_text(rule)}", SKYPILOT_READ)
        row = table.accelerator(key, rule_id, f"the SkyPilot catalog has no usable {key} row in this region")
        for region in regions:
            by_units = rates.get((key, region))
            if not by_units:
                continue
            entries = []
            for (od, spot), counts in tiers(by_units):
                v_od, v_spot = prices_build.vertex_rates(rule, od, spot)
                entries.append(table.entry(v_od, v_spot, basis, "the SkyPilot catalog gives no usable Spot "
                                                                "price here", counts))
            row["regions"][region] = entries
            if row["unit"] == "TPU chip":
                chips[(key, region)] = entries
    return chips


def _machine(table: TableBuilder, name: str, found: dict[str, Any] | None, regions: tuple[str, ...],
             listed: date, chips: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    rule_id = prices_build.machine_rule(name)
    if name == vertex_machines.CLOUD_TPU_MACHINE:
        table.machine(name, "machine", None, "billed through its accelerator: TPU_V2 or TPU_V3, per core")
        return
    host = vertex_machines.TPU_HOSTS.get(name)
    if host is not None:
        _tpu_host(table, name, host.chips_per_host, rule_id, regions, chips)
        return
    if rule_id is None:
        table.machine(name, "machine", None, prices_build.UNPRICED_FAMILIES[prices_build.family(name)])
        return
    rule = RULES_BY_ID[rule_id]
    includes = name in vertex_machines.FIXED_ACCELERATOR_MACHINES
    shape = _shape(found) if found else None
    missing = f"Cyclenerd pricing.yml has no {name} row in this region"
    if name == "a3-megagpu-8g":
        missing += "; SkyPilot's H100 Mega rows disagree across regions (35.39149 and 82.75421 for the same 8 GPUs)"
    row = table.machine(name, "machine", rule_id, missing if found else "Cyclenerd pricing.yml has no " + name,
                        includes, shape)
    basis = table.basis(f"Compute Engine list {listed}{prices_build.markup_text(rule)}", listed)
    for region in regions:
        cost = (found or {}).get("cost", {}).get(region)
        if not cost or not cost.get("hour"):
            continue
        od, spot = prices_build.vertex_rates(rule, float(cost["hour"]), _float(cost.get("hour_spot")))
        row["regions"][region] = table.entry(od, spot, basis, "Cyclenerd pricing.yml gives no Spot price here")


def _tpu_host(table: TableBuilder, name: str, chips_per_host: int, rule_id: str | None, regions: tuple[str, ...],
              chips: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    key = prices_build.tpu_host_key(name)
    if rule_id is None or key is None:
        table.machine(name, "TPU host", None, prices_build.UNPRICED_FAMILIES[prices_build.family(name)], True)
        return
    row = table.machine(name, "TPU host", rule_id, f"no {key} chip price in this region (see accelerators.{key})",
                        True, {"chips": chips_per_host, "accelerator": key})
    for region in regions:
        chip = next((t for t in chips.get((key, region), []) if chips_per_host in t["counts"]), None)
        if chip is None:
            continue
        spot = None if chip["spot"] is None else round(chip["spot"] * chips_per_host, 9)
        row["regions"][region] = table.entry(round(chip["od"] * chips_per_host, 9), spot, chip["b"],
                                             chip.get("why", ""))


def _shape(found: dict[str, Any]) -> dict[str, Any]:
    gpus = [(CYCLENERD_GPUS[k], int(v)) for k, v in found.items() if k in CYCLENERD_GPUS]
    shape: dict[str, Any] = {"cpu": found.get("cpu"), "ram_gb": found.get("ram")}
    if gpus:
        shape["gpu"], shape["gpus"] = gpus[0]
    if found.get("local-ssd"):
        shape["local_ssd_gb"] = found["local-ssd"]
    return shape


def _float(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cyclenerd", type=Path, required=True, help="pricing.yml at CYCLENERD_COMMIT")
    parser.add_argument("--skypilot", type=Path, required=True, help="catalogs/v8/gcp/vms.csv at SKYPILOT_COMMIT")
    parser.add_argument("--cyclenerd-commit", default=CYCLENERD_COMMIT)
    parser.add_argument("--skypilot-commit", default=SKYPILOT_COMMIT)
    parser.add_argument("--output", type=Path, default=prices.BUNDLED)
    parser.add_argument("--today", type=date.fromisoformat, default=date.today(), help="the table's date")
    args = parser.parse_args(argv)
    table, notes = build(args.cyclenerd, args.skypilot, args.today, args.cyclenerd_commit, args.skypilot_commit)
    args.output.write_text(prices_build.dump_table(table), encoding="utf-8")
    priced = sum(len(r["regions"]) for r in table["machines"].values())
    print(f"wrote {args.output}: {len(table['machines'])} machine types ({priced} region prices), "
          f"{len(table['accelerators'])} accelerators")
    for note in notes:
        print(f"  note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
