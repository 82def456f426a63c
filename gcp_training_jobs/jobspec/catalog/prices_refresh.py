"""A price table rebuilt from current list prices (pure): what `prices refresh` writes.

Input: the parts' list prices the Cloud Billing Catalog API gives (gcp_training_jobs.backends.billing.SkuRate: a
family's vCPU and memory, a GPU, local SSD, per region, on demand and Spot; Vertex AI's own training and
management-fee SKUs), and the bundled snapshot for everything else (the machine shapes, the units and counts,
what stays unknown). A machine type's Compute Engine price is rebuilt the way the snapshot's source built it
(Cyclenerd build/pricing.pl @ fd66b26ff84f): vCPUs x the family's core price + GiB x its memory price + GPUs x
the GPU price + local SSD GiB x the SSD price. Then, per region:

- when Vertex AI lists its own training SKUs for every part, its on-demand price is their sum (basis "Vertex
  AI SKU list DATE") and its Spot price Compute Engine's Spot plus the management-fee SKUs, when all exist;
- else the Vertex rule applies to the rebuilt Compute Engine prices (basis "Compute Engine SKU list DATE +
  Vertex 15%");
- when a part is missing (or the rebuilt entry would lose a Spot price the snapshot has) the snapshot's entry
  is kept, with its own basis and date (`PriceTable.oldest` tells).

TPU prices are not in the two services read (Cloud TPU is a service of its own): their entries are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from gcp_training_jobs.jobspec.catalog import prices_build, vertex_machines
from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.catalog.prices_build import RULES_BY_ID, TableBuilder


class PartRate(Protocol):
    """One part's list price in one region (gcp_training_jobs.backends.billing.SkuRate)."""

    @property
    def source(self) -> str: ...
    @property
    def part(self) -> str: ...
    @property
    def usage(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def usd(self) -> float: ...
    @property
    def scope(self) -> str: ...


@dataclass(frozen=True)
class Refreshed:
    """The table and what happened: entries rebuilt from the answer, entries kept from the snapshot."""

    table: dict[str, Any]
    machines: int
    accelerators: int
    kept: int


def refresh_table(parts: Iterable[PartRate], snapshot: PriceTable, today: date, where: str) -> Refreshed:
    """The snapshot's table with every entry the parts can price rebuilt, dated `today`, from `where`."""
    book = _book(parts)
    sources = [{"id": "cloudbilling", "title": "Cloud Billing Catalog API, services.skus.list (Compute Engine "
                "6F81-5844-456A, Vertex AI C7E2-9256-1C43)", "url": where, "generated": today.isoformat(),
                "used_for": "every entry whose basis names the SKU list"}]
    sources += [dict(s, used_for=f"entries kept from the bundled snapshot: {s.get('used_for', '')}")
                for s in snapshot.sources]
    builder = TableBuilder("refresh", today, sources)
    counts = {"machines": 0, "accelerators": 0, "kept": 0}
    for name, row in snapshot.data["machines"].items():
        _machine(builder, book, snapshot, name, row, today, counts)
    for key, row in snapshot.data["accelerators"].items():
        _accelerator(builder, book, snapshot, key, row, today, counts)
    return Refreshed(builder.to_dict(), counts["machines"], counts["accelerators"], counts["kept"])


#: How specific a SKU's price is to a region (its geoTaxonomy type): a region's own price wins.
_SCOPE_RANK = {"REGIONAL": 3, "": 2, "MULTI_REGIONAL": 2, "GLOBAL": 1}


def _book(parts: Iterable[PartRate]) -> dict[tuple[str, str, str, str], float]:
    """(source, part, usage, region) -> USD per hour: a REGIONAL SKU's price before a MULTI_REGIONAL one's, either
    before a GLOBAL one's (which holds in every training region); two SKUs as specific: the dearer
    (REGION_FALLBACK)."""
    ranked: dict[tuple[str, str, str, str], tuple[int, float]] = {}
    for p in parts:
        rank = _SCOPE_RANK.get(p.scope, 2)
        for region in prices_build.training_regions() if p.scope == "GLOBAL" else [p.region]:
            key = (p.source, p.part, p.usage, region)
            if key not in ranked or (rank, p.usd) > ranked[key]:
                ranked[key] = (rank, p.usd)
    return {key: usd for key, (_, usd) in ranked.items()}


def _recipe(book: Mapping[tuple[str, str, str, str], float], source: str, usage: str, region: str,
            parts: Iterable[tuple[str, float]]) -> float | None:
    total = 0.0
    for part, quantity in parts:
        if not quantity:
            continue
        price = book.get((source, part, usage, region))
        if price is None:
            return None
        total += price * quantity
    return total


def _parts(family: str, shape: Mapping[str, Any], with_ssd: bool = True) -> list[tuple[str, float]]:
    parts = [(f"cpu:{family}", float(shape.get("cpu") or 0)), (f"ram:{family}", float(shape.get("ram_gb") or 0))]
    if shape.get("gpu"):
        parts.append((f"gpu:{shape['gpu']}", float(shape.get("gpus") or 0)))
    if with_ssd and shape.get("local_ssd_gb"):
        parts.append(("ssd:local", float(shape["local_ssd_gb"])))
    return parts


def _keep(builder: TableBuilder, snapshot: PriceTable, entry: Mapping[str, Any]) -> dict[str, Any]:
    basis = snapshot.data["bases"][entry["b"]]
    kept = dict(entry)
    kept["b"] = builder.basis(basis["text"], date.fromisoformat(basis["date"]))
    return kept


def _machine(builder: TableBuilder, book: Mapping[tuple[str, str, str, str], float], snapshot: PriceTable,
             name: str, row: Mapping[str, Any], today: date, counts: dict[str, int]) -> None:
    new = builder.machine(name, row["unit"], row.get("rule"), row.get("missing", ""),
                          bool(row.get("includes_accelerators")), row.get("shape"))
    shape, rule_id = row.get("shape") or {}, row.get("rule")
    family = name.split("-", 1)[0]
    priced = rule_id in RULES_BY_ID and "cpu" in shape and family in _FAMILIES
    for region in prices_build.training_regions():
        entry = _rebuilt(builder, book, name, family, shape, rule_id, region, today) if priced else None
        if entry is not None and entry["spot"] is None and (row["regions"].get(region) or {}).get("spot") is not None:
            entry = None  # a rebuilt entry never loses a Spot price the snapshot has: keep the snapshot's whole
        if entry is not None:
            new["regions"][region] = entry
            counts["machines"] += 1
        elif region in row["regions"]:
            new["regions"][region] = _keep(builder, snapshot, row["regions"][region])
            counts["kept"] += 1


#: The machine families whose SKUs the answer is read for (gcp_training_jobs.backends.billing.FAMILY_SKUS).
_FAMILIES = ("e2", "n1", "n2", "n4", "a2", "a3", "g2", "g4", "c2", "m1")


def _rebuilt(builder: TableBuilder, book: Mapping[tuple[str, str, str, str], float], name: str, family: str,
             shape: Mapping[str, Any], rule_id: str | None, region: str, today: date) -> dict[str, Any] | None:
    rule = RULES_BY_ID[str(rule_id)]
    ce_od = _recipe(book, "ce", "on_demand", region, _parts(family, shape))
    ce_spot = _recipe(book, "ce", "spot", region, _parts(family, shape))
    vertex_od = None if shape.get("local_ssd_gb") else _recipe(book, "vertex", "on_demand", region,
                                                                _parts(family, shape))
    if vertex_od is not None:
        fee = _recipe(book, "fee", "on_demand", region, _parts(family, shape, with_ssd=False))
        spot = None if ce_spot is None or fee is None else round(ce_spot + fee, 9)
        basis = builder.basis(f"Vertex AI SKU list {today} (Spot: Compute Engine Spot + Vertex management fee "
                              "SKUs)", today)
        return builder.entry(round(vertex_od, 9), spot, basis, "the SKU list lacks a Spot or management-fee "
                                                                "part for it here")
    if ce_od is None:
        return None
    od, spot = prices_build.vertex_rates(rule, ce_od, ce_spot)
    basis = builder.basis(f"Compute Engine SKU list {today}{prices_build.markup_text(rule)}", today)
    return builder.entry(od, spot, basis, "the SKU list lacks a Spot part for it here")


def _accelerator(builder: TableBuilder, book: Mapping[tuple[str, str, str, str], float], snapshot: PriceTable,
                 key: str, row: Mapping[str, Any], today: date, counts: dict[str, int]) -> None:
    new = builder.accelerator(key, row.get("rule"), row.get("missing", ""))
    rule_id = row.get("rule")
    gpu_counts = sorted({c for by_gpu in vertex_machines.N1_GPU_COUNTS.values() for c in by_gpu.get(key, ())})
    for region in prices_build.training_regions():
        entry = None
        if rule_id == "attachable-gpu" and gpu_counts:
            entry = _gpu(builder, book, key, RULES_BY_ID[rule_id], region, today, gpu_counts)
        kept = row["regions"].get(region) or []
        if entry is not None and entry["spot"] is None and any(e.get("spot") is not None for e in kept):
            entry = None
        if entry is not None:
            new["regions"][region] = [entry]
            counts["accelerators"] += 1
        elif region in row["regions"]:
            new["regions"][region] = [_keep(builder, snapshot, e) for e in row["regions"][region]]
            counts["kept"] += 1


def _gpu(builder: TableBuilder, book: Mapping[tuple[str, str, str, str], float], key: str,
         rule: prices_build.VertexRule, region: str, today: date, gpu_counts: list[int]) -> dict[str, Any] | None:
    part = f"gpu:{key}"
    ce_od, ce_spot = book.get(("ce", part, "on_demand", region)), book.get(("ce", part, "spot", region))
    vertex_od, fee = book.get(("vertex", part, "on_demand", region)), book.get(("fee", part, "on_demand", region))
    if vertex_od is not None:
        spot = None if ce_spot is None or fee is None else round(ce_spot + fee, 9)
        basis = builder.basis(f"Vertex AI SKU list {today} (Spot: Compute Engine Spot + Vertex management fee "
                              "SKUs)", today)
        return builder.entry(round(vertex_od, 9), spot, basis, "the SKU list lacks a Spot or management-fee part "
                                                               "for it here", gpu_counts)
    if ce_od is None:
        return None
    od, spot = prices_build.vertex_rates(rule, ce_od, ce_spot)
    basis = builder.basis(f"Compute Engine SKU list {today}{prices_build.markup_text(rule)}", today)
    return builder.entry(od, spot, basis, "the SKU list lacks a Spot part for it here", gpu_counts)
