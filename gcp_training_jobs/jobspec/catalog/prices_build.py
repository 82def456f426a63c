"""How a price table is built (pure): the Vertex rule as labelled data with its evidence, how Spot and
Flex-start are billed, the region fallback, which Vertex AI machine types and accelerators a table covers,
and the builder that scripts/generate_prices.py (from public snapshots) and `prices refresh` (from the Cloud
Billing Catalog API) share, so both write the one format gcp_training_jobs.jobspec.catalog.prices reads.

Vertex AI custom training bills Compute Engine resources with a markup. Google's own figures (each row of
VERTEX_RULES names them) fix it at +15% for N1 machines and attachable GPUs; the August 2025 SKUs show it on the
A3's H100s, vCPUs and memory too (rule a3-h100: the higher of two figures that disagree, inferred). For the
families without a Vertex figure the rule applied is stated, with why, and marked
"inferred"; families no source prices stay unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from types import MappingProxyType
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog import vertex_machines, vertex_regions
from gcp_training_jobs.jobspec.catalog.prices import FORMAT, check_table

# --- The Vertex rule ------------------------------------------------------------------------------

PAGE_FIGURES: Final = (
    "Vertex AI pricing page (renamed 2026: Gemini Enterprise Agent Platform pricing), as transcribed verbatim "
    "in api-evangelist/google-vertex-ai plans/google-vertex-ai-plans-pricing.yml @ "
    "342263c39279d72204c9e1bb3058dceba0d215e1 (generated 2026-10-07): 'Custom training n1-standard-4' "
    "$0.21849885 / 1 hour and 'Accelerator NVIDIA_H100_80GB (training)' $9.79655057 / 1 hour (us-central1, "
    "the page's default region)"
)
T4_QUOTE: Final = (
    "'NVidia Tesla T4 costs $0.4025 / hr' next to a link to https://cloud.google.com/vertex-ai/pricing#training "
    "in a third-party gcloud ai custom-jobs script. 0.4025 is us-central1's T4 (0.35) x 1.15; the script's own "
    "region, europe-west4, lists T4 at 0.3675"
)
SKU_ARTICLE: Final = (
    "Vertex AI Training SKUs in Iowa, August 2025, copied from a billing report in a Zenn draft by "
    "google_cloud_jp (Google's SKU group page for them: "
    "https://cloud.google.com/skus/sku-groups/vertex-training): 'Training/Pipelines on NVIDIA H100 80GB' "
    "11.2660332 = 9.79655057 x 1.15, 'on A3 Instance Core' "
    "0.0293227 = 0.0254980 x 1.15; 'management fee on NVIDIA H100 80GB' 1.4694826 = 9.79655057 x 0.15, "
    "'management fee on A3 Instance Core' 0.0038247 = 0.0254980 x 0.15"
)

H100_PAGES_READ: Final = (
    "Google's own pages, read 2026-11-28: the Vertex AI pricing page (https://cloud.google.com/vertex-ai/pricing) "
    "and the Vertex AI Training SKU group (https://cloud.google.com/skus/sku-groups/vertex-training) could not "
    "be read whole when this rule was set (only their opening sections, without the training price tables), so "
    "neither page's A3, A3 Ultra or A4 figure was read; Google's page on reservations for training "
    "(https://cloud.google.com/vertex-ai/docs/training/use-reservations, section Billing) confirms the "
    "management fee is billed on top of Compute Engine's price"
)


@dataclass(frozen=True)
class VertexRule:
    """How Vertex AI prices a family from its Compute Engine list price: factor x list price."""

    id: str
    factor: float
    status: str
    """"observed": a Vertex figure shows it; "inferred": extended from the observed rules, see `why`."""
    applies_to: str
    evidence: tuple[str, ...]
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "factor": self.factor, "status": self.status, "applies_to": self.applies_to,
                "evidence": list(self.evidence), "why": self.why}


VERTEX_RULES: Final = (
    VertexRule(
        "n1", 1.15, "observed", "N1 machine types (n1-standard-*, n1-highmem-*, n1-highcpu-*)",
        (f"{PAGE_FIGURES}; 0.21849885 = 0.189999 x 1.15, 0.189999 being Compute Engine's n1-standard-4 in "
         "us-central1 (Cyclenerd pricing.yml @ fd66b26ff84f, generated 2026-07-30)",),
        "Google's own figure for an N1 machine is Compute Engine's list price plus 15%.",
    ),
    VertexRule(
        "attachable-gpu", 1.15, "observed", "GPUs attached to N1 machines (NVIDIA_TESLA_T4, _P4, _P100, _V100)",
        (T4_QUOTE, "Compute Engine T4 in us-central1: 0.35 (skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv)"),
        "Google's own figure for an attachable GPU (T4) is Compute Engine's plus 15%; P4, P100 and V100 are "
        "billed the same way (accelerators on N1), with no figure of their own.",
    ),
    VertexRule(
        "a3-h100", 1.15, "inferred", "A3 machines with H100 GPUs (a3-highgpu-*, a3-megagpu-8g), whole machines",
        (f"{SKU_ARTICLE}: Vertex AI bills an A3's H100s, vCPUs and memory at Compute Engine's list price plus "
         "15%, the same markup as rule n1",
         f"{PAGE_FIGURES}: 9.79655057 per H100-hour, Compute Engine's own H100 charge (Cyclenerd's a3-highgpu-8g "
         "in us-central1, 88.49, is 8 x 9.79655057 plus 10.12 for its 208 vCPUs, 1872 GB and 6000 GB local "
         "SSD); a third-party copy of the page, not Google's page itself, and it disagrees with the SKUs",
         f"{H100_PAGES_READ}"),
        "The two figures disagree (Compute Engine's rate on a 2026 copy of the page, +15% on the August 2025 "
        "SKUs) and Google's pricing page could not be read whole to settle it: the higher, +15%, is taken, so "
        "the dearest machine is never stated low (at most 13% high, should Vertex charge Compute Engine's "
        "rate). Marked inferred until Google's page is read.",
    ),
    VertexRule(
        "cpu", 1.15, "inferred", "CPU-only families other than N1 (e2, n2, n4, c2, m1)",
        ("N1 (rule n1) is the only CPU family with a Vertex figure; the August 2025 SKUs show the same +15% on "
         f"A3 vCPUs ({SKU_ARTICLE})",),
        "Every Vertex figure for vCPUs and memory found (N1 2026, A3 2025) is Compute Engine's plus 15%.",
    ),
    VertexRule(
        "a2-g2-g4", 1.15, "inferred", "A2, G2 and G4 whole machines, GPUs included (A100, A100 80GB, L4, RTX PRO "
        "6000)",
        ("no Vertex figure for these families was found; the observed +15% holds for the N1 machine and the "
         "T4, and held for every A3 part in August 2025", SKU_ARTICLE),
        "Every Vertex figure read for these parts is +15%; applying it keeps these estimates from being "
        "low (a cost cap errs on the safe side). Marked inferred so a report can say so.",
    ),
    VertexRule(
        "tpu", 1.15, "inferred", "Cloud TPU on Vertex: TPU_V2 / TPU_V3 (cloud-tpu), TPU v5e (ct5lp-*), v6e (ct6e-*)",
        ("no Vertex TPU figure was found; Cloud TPU list prices from the SkyPilot catalog",),
        "Vertex bills accelerators with its training markup (rule attachable-gpu); +15% keeps a TPU estimate "
        "from being low. Marked inferred.",
    ),
)
RULES_BY_ID: Final = MappingProxyType({r.id: r for r in VERTEX_RULES})

#: Machine families no source prices (Compute Engine list snapshot lacks them; the SkyPilot rows are 0 or disagree).
UNPRICED_FAMILIES: Final = MappingProxyType({
    "a3-ultragpu": "no source prices it: Cyclenerd pricing.yml has no a3-ultragpu and SkyPilot's H200 rows "
                   "disagree across regions (36.60258 and 74.49392 for the same 8 GPUs)",
    "a4-highgpu": "no source prices it: Cyclenerd pricing.yml has no a4 and SkyPilot prices a4 hosts 0 and its "
                  "B200 rows disagree across regions",
    "a4x-highgpu": "no source prices it: neither Cyclenerd pricing.yml nor the SkyPilot catalog has a4x (GB200)",
    "tpu7x-standard": "no source prices it: neither snapshot has TPU7x",
})

SPOT_RULE: Final = {
    "text": "Vertex Spot = Compute Engine Spot list + the Vertex management fee, (factor - 1) x the Compute Engine "
            "on-demand list (so 15% of on demand where the factor is 1.15, nothing for A3)",
    "status": "inferred",
    "evidence": [
        "Google's Spot page for Vertex training: 'When you use Spot VMs, you're billed by job duration and "
        "machine type' (https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/"
        "use-spot-vms, via apstndb/gemini-enterprise-agent-platform-docs-mirror @ a185026, 2026-08-22); "
        "Vertex's pricing page, as paraphrased in the Zenn draft "
        "(footnote 6): Spot VMs used with Vertex AI are billed as Compute Engine SKUs plus a Vertex AI "
        "management-fee SKU",
        f"the management-fee SKUs are 15% of Compute Engine's on-demand price ({SKU_ARTICLE})",
    ],
}

STRATEGIES: Final = {
    "STANDARD": {"rate": "on_demand", "bound": "exact", "why": "regular on-demand resources"},
    "SPOT": {"rate": "spot", "bound": "exact", "why": "Spot resources, at the Spot rate (spot_rule)"},
    "FLEX_START": {
        "rate": "on_demand", "bound": "upper",
        "why": "Google's DWS page for training: 'When using DWS flex start, you're billed according to Dynamic "
               "Workload Scheduler pricing (cloud.google.com/products/dws/pricing). There are serverless training "
               "management fees in addition to your infrastructure usage.' Neither snapshot holds DWS prices. "
               "DWS flex-start is priced at or below on demand (Compute Engine 'About Flex-start VMs': A4, A3 "
               "and A2 vCPUs, memory and GPUs at a discounted price; G2 at list), so the on-demand rate is an "
               "upper bound. The issue's reading (Google Cloud Japan's blog: 'billed at on-demand rates') "
               "is this bound.",
        "sources": [
            "https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/"
            "schedule-jobs-dws (section Billing)",
            "https://cloud.google.com/compute/docs/instances/about-flex-start-vms",
        ],
    },
}

REGION_FALLBACK: Final = (
    "Per-zone prices (the SkyPilot catalog's rows) become a region's price as the highest of its zones' prices, "
    "on demand and Spot each: Vertex AI, not the user, picks the zone, so the estimate must hold in any of them. "
    "In the rows used the zones of a region agree except where the generator's report says otherwise. "
    "Per-region prices (Cyclenerd pricing.yml, the Cloud Billing Catalog's serviceRegions) are taken as they are."
)

# --- What a table covers --------------------------------------------------------------------------

#: Accelerators whose price is part of their machine type's (whole-machine list prices).
FIXED_MACHINE_ACCELERATORS: Final = tuple(sorted({m.accelerator for m in
                                                  vertex_machines.FIXED_ACCELERATOR_MACHINES.values()}))
#: The accelerator key a TPU VM host's chips are priced under: its acceleratorType enum value, else (v6e, TPU7x,
#: which have none) the locations page's label, as vertex_regions.UNMAPPED_MACHINE_LABELS names it.
TPU_HOST_KEYS: Final = MappingProxyType({"ct5lp-": "TPU_V5_LITEPOD", "ct6e-": "TPU v6e", "tpu7x-": "TPU7x"})
ACCELERATOR_UNITS: Final = MappingProxyType({
    **{gpu: "GPU" for gpu in sorted({g for counts in vertex_machines.N1_GPU_COUNTS.values() for g in counts})},
    **{gpu: "GPU" for gpu in FIXED_MACHINE_ACCELERATORS},
    **{tpu: "TPU core" for tpu in vertex_machines.CLOUD_TPU_ACCELERATOR_COUNTS},
    **{key: "TPU chip" for key in TPU_HOST_KEYS.values()},
})


def catalog_machines() -> tuple[str, ...]:
    """Every machine type the Vertex AI catalog lists (vertex_machines), sorted."""
    return tuple(sorted({*vertex_machines.CPU_MACHINE_TYPES, *vertex_machines.FIXED_ACCELERATOR_MACHINES,
                         *vertex_machines.N1_GPU_COUNTS, *vertex_machines.TPU_HOSTS,
                         vertex_machines.CLOUD_TPU_MACHINE}))


def training_regions() -> tuple[str, ...]:
    return tuple(vertex_regions.TRAINING_REGIONS)


def family(machine_type: str) -> str:
    """"a3-highgpu" for a3-highgpu-8g, "ct5lp-hightpu" for ct5lp-hightpu-4t, "n1" for n1-standard-4."""
    fixed = vertex_machines.FIXED_ACCELERATOR_MACHINES.get(machine_type)
    if fixed is not None:
        return fixed.family
    if machine_type in vertex_machines.TPU_HOSTS:
        return machine_type.rsplit("-", 1)[0]
    return machine_type.split("-", 1)[0]


def tpu_host_key(machine_type: str) -> str | None:
    """The accelerator key a TPU VM host's chips are priced under, or None."""
    return next((key for prefix, key in TPU_HOST_KEYS.items() if machine_type.startswith(prefix)), None)


def machine_rule(machine_type: str) -> str | None:
    """The VERTEX_RULES id for a machine type, None when no source prices its family."""
    fam = family(machine_type)
    if fam in UNPRICED_FAMILIES:
        return None
    if fam in ("a3-highgpu", "a3-megagpu"):
        return "a3-h100"
    if fam.split("-")[0] in ("a2", "g2", "g4"):
        return "a2-g2-g4"
    if fam.startswith(("ct5lp", "ct6e")) or machine_type == vertex_machines.CLOUD_TPU_MACHINE:
        return "tpu"
    return "n1" if fam == "n1" else "cpu"


def accelerator_rule(key: str) -> str | None:
    if key in FIXED_MACHINE_ACCELERATORS or key == "TPU7x":
        return None
    return "tpu" if ACCELERATOR_UNITS.get(key, "").startswith("TPU") else "attachable-gpu"


def vertex_rates(rule: VertexRule, ce_on_demand: float | None, ce_spot: float | None) -> tuple[float | None,
                                                                                               float | None]:
    """Vertex on-demand and Spot from Compute Engine's: factor x on demand; Spot + (factor - 1) x on demand."""
    if ce_on_demand is None:
        return None, None
    spot = None if ce_spot is None else ce_spot + (rule.factor - 1) * ce_on_demand
    return _round(rule.factor * ce_on_demand), None if spot is None else _round(spot)


def markup_text(rule: VertexRule) -> str:
    """" + Vertex 15%", " (Vertex = Compute Engine, rule a3-h100)", " + Vertex 15% (inferred, rule cpu)"."""
    if rule.factor == 1.0:
        return f" (Vertex charges the same, rule {rule.id})"
    pct = f"{(rule.factor - 1) * 100:.0f}%"
    return f" + Vertex {pct}" + (f" (inferred, rule {rule.id})" if rule.status == "inferred" else "")


def _round(value: float) -> float:
    return round(value, 9)


# --- The builder ----------------------------------------------------------------------------------


@dataclass
class TableBuilder:
    """Collects rows and writes the table's JSON; `missing` reasons say why a region has no entry."""

    kind: str
    generated: date
    sources: list[dict[str, Any]]
    machines: dict[str, dict[str, Any]] = field(default_factory=dict)
    accelerators: dict[str, dict[str, Any]] = field(default_factory=dict)
    bases: list[dict[str, str]] = field(default_factory=list)

    def basis(self, text: str, when: date) -> int:
        row: dict[str, str] = {"text": text, "date": when.isoformat()}
        if row not in self.bases:
            self.bases.append(row)
        return self.bases.index(row)

    def machine(self, name: str, unit: str, rule: str | None, missing: str, includes: bool = False,
                shape: Mapping[str, Any] | None = None) -> dict[str, Any]:
        row: dict[str, Any] = {"unit": unit, "rule": rule, "includes_accelerators": includes, "missing": missing,
                               "regions": {}}
        if shape:
            row["shape"] = dict(shape)
        self.machines[name] = row
        return row

    def accelerator(self, key: str, rule: str | None, missing: str) -> dict[str, Any]:
        row: dict[str, Any] = {"unit": ACCELERATOR_UNITS[key], "rule": rule, "missing": missing, "regions": {}}
        self.accelerators[key] = row
        return row

    def entry(self, od: float | None, spot: float | None, basis: int, why: str = "",
              counts: Iterable[int] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"od": od, "spot": spot, "b": basis}
        if od is None or spot is None:
            out["why"] = why or "no source gives this figure"
        if counts is not None:
            out["counts"] = sorted(counts)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "kind": self.kind, "generated": self.generated.isoformat(),
            "sources": self.sources, "region_fallback": REGION_FALLBACK,
            "vertex_rules": [r.as_dict() for r in VERTEX_RULES], "spot_rule": SPOT_RULE,
            "strategies": STRATEGIES, "bases": self.bases,
            "machines": dict(sorted(self.machines.items())), "accelerators": dict(sorted(self.accelerators.items())),
        }


def dump_table(table: Mapping[str, Any]) -> str:
    """The table as the JSON text written to disk: one line per region's prices, so a refresh reads as a diff.
    Checked first (a builder bug never writes a bad table) and read back (the text is the table)."""
    problems = check_table(json.loads(json.dumps(table)))
    if problems:
        raise ValueError("refusing to write a malformed price table: " + "; ".join(problems[:5]))
    parts = [f" {json.dumps(k)}: {_indented(v)}" for k, v in table.items() if k not in ("machines", "accelerators")]
    for kind in ("machines", "accelerators"):
        rows = []
        for name, row in table[kind].items():
            meta = ", ".join(f"{json.dumps(k)}: {_line(v)}" for k, v in row.items() if k != "regions")
            regions = ",\n".join(f"   {json.dumps(r)}: {_line(e)}" for r, e in row["regions"].items())
            body = f"{{\n{regions}\n  }}" if regions else "{}"
            rows.append(f"  {json.dumps(name)}: {{{meta}, \"regions\": {body}}}")
        parts.append(f" {json.dumps(kind)}: {{\n" + ",\n".join(rows) + "\n }")
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    if json.loads(text) != json.loads(json.dumps(table)):
        raise AssertionError("the written text does not read back as the table")
    return text


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _indented(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", "\n ")
