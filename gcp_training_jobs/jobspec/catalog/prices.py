"""Prices per hour of what Vertex AI custom training runs: the lookup over the price table (pure).

The table is data, not code: a JSON document (format FORMAT) with, per machine type and per accelerator and
per Vertex AI training region, the on-demand and the Spot USD per hour, each with the basis it was derived
on ("Compute Engine list 2026-07-30 + Vertex 15%") and the date of that basis; the Vertex rule (how Vertex
relates to Compute Engine) as labelled data with its evidence; the region fallback; and, for what no source
prices, "unknown" with the reason. Two tables exist:

- the bundled snapshot, ``prices_table.json`` beside this module, written by ``scripts/generate_prices.py``
  from two public snapshots of Google's price list (its ``sources`` name the repository, file, commit and
  generation date of each);
- a refreshed table, written by ``gcp-training-jobs prices refresh`` from the Cloud Billing Catalog API.

Estimates prefer the refreshed one (``active_table``): the file named by $GCP_TRAINING_JOBS_PRICES_FILE, else
``$XDG_CACHE_HOME/gcp-training-jobs/prices.json`` (``~/.cache/...`` without XDG_CACHE_HOME), when it exists;
else the bundled snapshot. A table is read once per version of its file (path, inode, mtime, size: a
functools.lru_cache, no other state), so a refresh written while a process runs is picked up by its next lookup.

Units: machine prices are per machine (for the TPU VM hosts ct5lp-* / ct6e-*: per host, its chips included:
``includes_accelerators``); accelerator prices are per unit as the source prices it: per GPU, per TPU chip
(v5e, v6e), per TPU core (v2, v3: ``acceleratorCount`` counts cores), each valid for the unit counts
(``counts``) the source prices at that rate (TPU v2 Pod cores cost more than a single device's).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.source import Source
from gcp_training_jobs.jobspec.core.env import VARIABLES, env_settings
from gcp_training_jobs.jobspec.core.errors import UnreadableError

#: The table format this code reads and writes.
FORMAT: Final = 1
#: The environment variable naming the refreshed table (read first; written by `prices refresh`).
PRICES_FILE_ENV: Final = VARIABLES["prices_file"]
#: The bundled snapshot, shipped in the wheel (pyproject package-data).
BUNDLED: Final = Path(__file__).with_name("prices_table.json")
#: Table kinds: the generated snapshot, or a table written from the Cloud Billing Catalog API.
KINDS: Final = ("snapshot", "refresh")
#: Strategies estimates know; each maps to the rate it runs at in `strategies` of the table.
STRATEGY_RATES: Final = ("on_demand", "spot")


# --- A job on a reservation ----------------------------------------------------------------------


@dataclass(frozen=True)
class ReservationFee:
    """What Vertex AI bills a training job on top of the reserved machines it runs on: the reservation pays the
    machines (billed whether used or not), the job adds Vertex AI's training management fee."""

    share: float
    """The fee as a share of the machines' on-demand price in the table (an upper bound: see `why`)."""
    why: str
    sources: tuple[Source, ...]


RESERVATION_FEE: Final = ReservationFee(
    share=0.15,
    why=("Google bills a training job on a Compute Engine reservation 'Compute Engine pricing for the Compute Engine "
         "resources' (paid by the reservation) and 'serverless training management fees in addition to your "
         "infrastructure usage'; the management-fee SKUs of Vertex AI Training are 15% of Compute Engine's "
         "on-demand price (August 2025: 'management fee on NVIDIA H100 80GB' 1.4694826 = 9.79655057 x 0.15, on A3 "
         "Instance Core 0.0038247 = 0.0254980 x 0.15; the same 15% the N1 and T4 figures add). 15% of the table's "
         "Vertex price, itself Compute Engine's or above, is at least that fee: the figure is an upper bound"),
    sources=(
        Source("Use reservations with training", "https://cloud.google.com/vertex-ai/docs/training/use-reservations",
               date(2026, 11, 28), note="Section Billing: Compute Engine pricing for the reserved resources, "
               "including any applicable committed use discounts, and serverless training management fees in "
               "addition to the infrastructure usage (Custom-trained models pricing). The fee's rate is not on "
               "this page."),
        Source("Use reservations with inference", "https://cloud.google.com/vertex-ai/docs/predictions/use-reservations",
               date(2026, 11, 28), note="'You're charged for the reserved resources at the same on-demand rate "
               "as running VMs, including any applicable discounts, until the reservation is deleted. A VM "
               "consuming a reservation doesn't incur separate charges.'"),
        Source("Vertex AI Training SKUs", "https://cloud.google.com/skus/sku-groups/vertex-training",
               date(2026, 11, 28), note="The management-fee SKUs per accelerator, vCPU and GiB; their August 2025 "
               "Iowa prices as a billing report showed them (15% of Compute Engine's on-demand price). The page "
               "could not be read whole when this was set: the rate is inferred from those SKUs."),
    ),
)

_Day = date  # the type, for the annotations of PriceTable (whose `date` property shadows the name)


class PriceTableError(UnreadableError):
    """A price table that cannot be used: the file, the field, what is wrong and what is allowed."""


@dataclass(frozen=True)
class Basis:
    """What an entry's figures were derived on, and the date of the prices behind them."""

    text: str
    """e.g. "Compute Engine list 2026-07-30 + Vertex 15%"."""
    date: date


@dataclass(frozen=True)
class Price:
    """The Vertex AI price per hour of one machine type or accelerator in one region, on demand and on Spot.

    A figure is None when no source gives it; its reason (`on_demand_reason` / `spot_reason`) says why.
    """

    key: str
    region: str
    unit: str
    """"machine", "TPU host", "GPU", "TPU chip" or "TPU core"."""
    on_demand: float | None
    spot: float | None
    basis: Basis | None
    on_demand_reason: str = ""
    spot_reason: str = ""
    includes_accelerators: bool = False
    """A machine whose price already holds its accelerators (a2/a3/g2/g4 whole machines, TPU hosts)."""
    counts: tuple[int, ...] = ()
    """Accelerators: the unit counts per replica this per-unit rate holds for."""
    table_date: date | None = None
    """The table's own date (when it was generated or refreshed)."""

    @property
    def known(self) -> bool:
        return self.on_demand is not None

    def rate(self, strategy: str) -> float | None:
        """The rate a job runs at: "on_demand" or "spot" (see PriceTable.strategy_rate)."""
        return self.spot if strategy == "spot" else self.on_demand


@dataclass(frozen=True)
class PriceTable:
    """A loaded, checked price table (see the module docstring for its shape)."""

    data: Mapping[str, Any]
    path: str

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def date(self) -> _Day:
        """When the table was generated or refreshed."""
        return _Day.fromisoformat(self.data["generated"])

    @property
    def oldest(self) -> _Day:
        """The date of its oldest prices (a refreshed table may carry snapshot entries it could not refresh)."""
        return min(_Day.fromisoformat(b["date"]) for b in self.data["bases"])

    @property
    def sources(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self.data["sources"])

    @property
    def vertex_rules(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self.data["vertex_rules"])

    @property
    def region_fallback(self) -> str:
        return str(self.data["region_fallback"])

    @property
    def spot_rule(self) -> Mapping[str, Any]:
        """How a Spot price is derived ({text, status, evidence})."""
        return dict(self.data.get("spot_rule") or {})

    def strategy_rate(self, strategy: str | None) -> Mapping[str, Any]:
        """How a scheduling strategy is billed: {"rate": "on_demand"|"spot", "bound": ..., "why": ..., ...}.
        None and unknown strategies run on demand (STANDARD)."""
        strategies = self.data["strategies"]
        return dict(strategies.get(strategy or "STANDARD") or strategies["STANDARD"])

    def source_lines(self) -> list[str]:
        """One line per source of the table: title, where it was read (repository, file, commit) and its date."""
        lines = []
        for s in self.data["sources"]:
            where = f"{s['repo']} {s['path']} @ {s['commit'][:12]}" if s.get("repo") else s.get("url", "")
            when = f"generated {s['generated']}" if s.get("generated") else f"read {s['read']}"
            lines.append(f"{s['title']}, {where}, {when}")
        return lines

    def _basis(self, index: int) -> Basis:
        row = self.data["bases"][index]
        return Basis(row["text"], _Day.fromisoformat(row["date"]))

    def machine(self, machine_type: str, region: str) -> Price:
        row = self.data["machines"].get(machine_type)
        if row is None:
            return self._unknown(machine_type, region, "machine", f"{machine_type} is not a machine type the "
                                 "Vertex AI catalog lists (gcp_training_jobs/jobspec/catalog/vertex_machines.py)")
        entry = row["regions"].get(region)
        if entry is None:
            return self._unknown(machine_type, region, row["unit"], self._missing(row, region),
                                 bool(row.get("includes_accelerators")))
        return self._price(machine_type, region, row, entry)

    def accelerator(self, accelerator: str, region: str, count: int = 1) -> Price:
        row = self.data["accelerators"].get(accelerator)
        if row is None:
            return self._unknown(accelerator, region, "accelerator", f"{accelerator} is not an accelerator the "
                                 "Vertex AI catalog lists (gcp_training_jobs/jobspec/catalog/vertex_machines.py)")
        tiers = row["regions"].get(region)
        if tiers is None:
            return self._unknown(accelerator, region, row["unit"], self._missing(row, region))
        for tier in tiers:
            if count in tier["counts"]:
                return self._price(accelerator, region, row, tier)
        priced = ", ".join(str(c) for t in tiers for c in t["counts"])
        return self._unknown(accelerator, region, row["unit"], f"no source prices {count} x {accelerator} per "
                             f"replica in {region}; it is priced for {priced} {row['unit']}(s)")

    def _missing(self, row: Mapping[str, Any], region: str) -> str:
        return str(row.get("missing") or "no source prices it") + f" (region {region})"

    def _price(self, key: str, region: str, row: Mapping[str, Any], entry: Mapping[str, Any]) -> Price:
        why = str(entry.get("why") or "")
        return Price(key, region, row["unit"], entry["od"], entry["spot"], self._basis(entry["b"]),
                     why if entry["od"] is None else "", why if entry["spot"] is None else "",
                     bool(row.get("includes_accelerators")), tuple(entry.get("counts") or ()), self.date)

    def _unknown(self, key: str, region: str, unit: str, reason: str, includes: bool = False) -> Price:
        return Price(key, region, unit, None, None, None, reason, reason, includes, (), self.date)


# --- Where the table is ---------------------------------------------------------------------------


def refreshed_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where `prices refresh` writes and estimates look first: $GCP_TRAINING_JOBS_PRICES_FILE, else the user
    cache folder ($XDG_CACHE_HOME, else ~/.cache) / gcp-training-jobs / prices.json."""
    env = os.environ if environ is None else environ
    named = env_settings(env).prices_file
    if named is not None:
        return named.expanduser()
    cache = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(cache) / "gcp-training-jobs" / "prices.json"


def active_table(environ: Mapping[str, str] | None = None) -> PriceTable:
    """The refreshed table when one exists (refreshed_path), else the bundled snapshot."""
    path = refreshed_path(environ)
    return load_table(path) if path.is_file() else bundled_table()


def bundled_table() -> PriceTable:
    return load_table(BUNDLED)


def load_table(path: str | Path) -> PriceTable:
    """The table in a file, checked (PriceTableError names the file and the field); read once per version."""
    where = Path(path)
    try:
        stat = where.stat()
    except OSError as error:
        raise PriceTableError(f"{where}: cannot read the price table ({error.strerror or error})") from None
    return _load(str(where), stat.st_ino, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: str, inode: int, mtime_ns: int, size: int) -> PriceTable:
    """One version of a table file (a refresh replaces the file: a new inode, so it is read again)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError) as error:
        raise PriceTableError(f"{path}: cannot read the price table ({error})") from None
    except json.JSONDecodeError as error:
        raise PriceTableError(f"{path}: not JSON at line {error.lineno} column {error.colno}: {error.msg}; "
                              f"a price table is the JSON `prices refresh` writes") from None
    problems = check_table(data)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise PriceTableError(f"{path}: not a usable price table: {shown}")
    return PriceTable(data, path)


# --- The table's shape ----------------------------------------------------------------------------


def _number_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool) and value >= 0)


def _is_date(value: Any) -> bool:
    try:
        date.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return True


def check_table(data: Any) -> list[str]:
    """Every problem of a table's shape, each as "field: what is wrong; allowed: ..." (empty when usable)."""
    if not isinstance(data, dict):
        return ["(top): expected a JSON object"]
    problems: list[str] = []
    if data.get("format") != FORMAT:
        problems.append(f"format: {data.get('format')!r}; allowed: {FORMAT}")
    if data.get("kind") not in KINDS:
        problems.append(f"kind: {data.get('kind')!r}; allowed: {', '.join(KINDS)}")
    if not _is_date(data.get("generated")):
        problems.append("generated: expected a date YYYY-MM-DD")
    for key in ("sources", "vertex_rules", "bases"):
        if not isinstance(data.get(key), list) or not data.get(key):
            problems.append(f"{key}: expected a non-empty list")
    if not isinstance(data.get("region_fallback"), str):
        problems.append("region_fallback: expected text")
    strategies = data.get("strategies")
    if not isinstance(strategies, dict) or not isinstance(strategies.get("STANDARD"), dict):
        problems.append("strategies: expected an object with STANDARD")
    else:
        problems += [f"strategies.{k}.rate: {v.get('rate')!r}; allowed: {', '.join(STRATEGY_RATES)}"
                     for k, v in strategies.items() if not isinstance(v, dict) or v.get("rate") not in STRATEGY_RATES]
    bases: list[Any] = data["bases"] if isinstance(data.get("bases"), list) else []
    for i, b in enumerate(bases):
        if not isinstance(b, dict) or not isinstance(b.get("text"), str) or not _is_date(b.get("date")):
            problems.append(f"bases[{i}]: expected {{text, date YYYY-MM-DD}}")
    for kind, tiered in (("machines", False), ("accelerators", True)):
        rows = data.get(kind)
        if not isinstance(rows, dict) or not rows:
            problems.append(f"{kind}: expected a non-empty object")
            continue
        for name, row in rows.items():
            problems += _check_row(f"{kind}.{name}", row, tiered, len(bases))
    return problems


def _check_row(where: str, row: Any, tiered: bool, bases: int) -> list[str]:
    if not isinstance(row, dict) or not isinstance(row.get("unit"), str) or not isinstance(row.get("regions"), dict):
        return [f"{where}: expected {{unit, regions, ...}}"]
    problems: list[str] = []
    for region, value in row["regions"].items():
        entries: Iterable[Any] = value if tiered and isinstance(value, list) else [value]
        if tiered and not isinstance(value, list):
            problems.append(f"{where}.regions.{region}: expected a list of rates")
            continue
        for entry in entries:
            problems += _check_entry(f"{where}.regions.{region}", entry, tiered, bases)
    return problems


def _check_entry(where: str, entry: Any, tiered: bool, bases: int) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: expected {{od, spot, b}}"]
    problems = [f"{where}.{k}: {entry.get(k)!r}; allowed: a number >= 0, or null with a reason in `why`"
                for k in ("od", "spot") if not _number_or_none(entry.get(k))]
    if not isinstance(entry.get("b"), int) or not 0 <= entry["b"] < bases:
        problems.append(f"{where}.b: {entry.get('b')!r}; allowed: an index into bases (0..{bases - 1})")
    if (entry.get("od") is None or entry.get("spot") is None) and not entry.get("why"):
        problems.append(f"{where}.why: a missing figure needs its reason")
    counts = entry.get("counts")
    if tiered and (not isinstance(counts, list) or not counts or not all(isinstance(c, int) and c > 0 for c in counts)):
        problems.append(f"{where}.counts: {counts!r}; allowed: a non-empty list of positive unit counts")
    return problems
