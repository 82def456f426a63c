"""The price table: what the bundled snapshot covers and says (sources, the Vertex rule with its evidence,
bases and dates, unknowns with reasons), how lookups read it (units, TPU tiers, whole machines), which table
estimates read (a refreshed one first), and the generator that writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from datetime import date
from pathlib import Path

import pytest

from gcp_training_jobs.jobspec.catalog import prices, prices_build, vertex_machines, vertex_regions
from gcp_training_jobs.jobspec.catalog.prices import PriceTableError

ROOT = Path(__file__).resolve().parent.parent
TABLE = prices.bundled_table()


def test_every_catalog_machine_and_accelerator_is_priced_or_unknown_with_a_reason_in_every_region() -> None:
    machines = set(prices_build.catalog_machines())
    assert machines == set(TABLE.data["machines"])
    assert {"n1-standard-4", "a3-highgpu-8g", "ct5lp-hightpu-4t", "cloud-tpu", "tpu7x-standard-4t"} <= machines
    accelerators = {g for counts in vertex_machines.N1_GPU_COUNTS.values() for g in counts}
    accelerators |= {m.accelerator for m in vertex_machines.FIXED_ACCELERATOR_MACHINES.values()}
    accelerators |= set(vertex_machines.CLOUD_TPU_ACCELERATOR_COUNTS) | {"TPU_V5_LITEPOD", "TPU v6e", "TPU7x"}
    assert accelerators == set(TABLE.data["accelerators"])
    for region in vertex_regions.TRAINING_REGIONS:
        for name in machines:
            price = TABLE.machine(name, region)
            assert price.on_demand is not None or price.on_demand_reason, (name, region)
            assert price.spot is not None or price.spot_reason, (name, region)
        for key in accelerators:
            price = TABLE.accelerator(key, region, 8 if key in ("TPU_V2", "TPU_V3") else 1)
            assert price.on_demand is not None or price.on_demand_reason, (key, region)
    regions = {r for kind in ("machines", "accelerators") for row in TABLE.data[kind].values() for r in row["regions"]}
    assert regions <= set(vertex_regions.TRAINING_REGIONS)


def test_the_sources_are_named_with_repository_file_commit_and_date() -> None:
    by_id = {s["id"]: s for s in TABLE.sources}
    assert by_id["cyclenerd"]["commit"] == "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
    assert by_id["cyclenerd"]["path"] == "pricing.yml" and by_id["cyclenerd"]["generated"] == "2026-07-30"
    assert by_id["skypilot"]["path"] == "catalogs/v8/gcp/vms.csv" and len(by_id["skypilot"]["commit"]) == 40
    assert by_id["vertex-page"]["commit"] == "342263c39279d72204c9e1bb3058dceba0d215e1"
    assert TABLE.kind == "snapshot" and TABLE.oldest == date(2026, 7, 30)
    assert any("Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @ fd66b26ff84f, generated 2026-07-30"
               in line for line in TABLE.source_lines())


def test_googles_own_figures_come_out_of_the_table_with_their_basis() -> None:
    n1 = TABLE.machine("n1-standard-4", "us-central1")
    assert n1.on_demand == 0.21849885 and n1.basis is not None
    assert n1.basis.text == "Compute Engine list 2026-07-30 + Vertex 15%" and n1.basis.date == date(2026, 7, 30)
    t4 = TABLE.accelerator("NVIDIA_TESLA_T4", "us-central1", 2)
    assert t4.on_demand == 0.4025 and t4.unit == "GPU" and 2 in t4.counts
    a3 = TABLE.machine("a3-highgpu-8g", "us-central1")  # whole machine, H100s included, the higher figure: +15%
    assert a3.on_demand == pytest.approx(88.49 * 1.15, abs=1e-6) and a3.includes_accelerators
    assert a3.basis is not None and a3.basis.text.endswith("+ Vertex 15% (inferred, rule a3-h100)")


def test_the_vertex_rule_is_labelled_data_with_evidence() -> None:
    rules = {r["id"]: r for r in TABLE.vertex_rules}
    assert rules["n1"]["factor"] == 1.15 and rules["n1"]["status"] == "observed"
    assert "0.21849885 = 0.189999 x 1.15" in rules["n1"]["evidence"][0]
    assert "0.4025" in rules["attachable-gpu"]["evidence"][0] and rules["a3-h100"]["factor"] == 1.15
    a3 = rules["a3-h100"]
    assert a3["status"] == "inferred" and "could not be read whole" in " ".join(a3["evidence"])
    assert {r["status"] for r in rules.values()} == {"observed", "inferred"}
    assert all(r["evidence"] and r["why"] for r in rules.values())
    inferred = TABLE.machine("g2-standard-8", "us-central1")
    assert inferred.basis is not None and inferred.basis.text.endswith("(inferred, rule a2-g2-g4)")
    assert "highest of its zones" in TABLE.region_fallback


def test_spot_adds_the_management_fee_and_flex_start_is_bounded_by_on_demand() -> None:
    n1 = TABLE.machine("n1-standard-4", "us-central1")
    assert n1.spot == pytest.approx(0.06701 + 0.15 * 0.189999)  # CE Spot + 15% of CE on demand
    assert TABLE.spot_rule["status"] == "inferred" and "management fee" in TABLE.spot_rule["text"]
    assert TABLE.strategy_rate("SPOT")["rate"] == "spot"
    flex = TABLE.strategy_rate("FLEX_START")
    assert flex["rate"] == "on_demand" and flex["bound"] == "upper" and "Dynamic Workload Scheduler" in flex["why"]
    assert TABLE.strategy_rate(None)["rate"] == "on_demand" and n1.rate("spot") == n1.spot


def test_tpus_are_priced_per_core_or_per_chip_as_the_source_prices_them() -> None:
    device = TABLE.accelerator("TPU_V2", "us-central1", 8)
    pod = TABLE.accelerator("TPU_V2", "us-central1", 32)
    assert device.unit == "TPU core" and device.on_demand == pytest.approx(4.5 / 8 * 1.15)
    assert pod.on_demand == pytest.approx(24.0 / 32 * 1.15)  # Pod cores cost more than a device's
    lone = TABLE.accelerator("TPU_V2", "us-central1", 1)
    assert lone.on_demand is None and "priced for 8, 32" in lone.on_demand_reason
    chip = TABLE.accelerator("TPU_V5_LITEPOD", "us-central1", 16)
    host = TABLE.machine("ct5lp-hightpu-4t", "us-central1")
    assert chip.unit == "TPU chip" and chip.on_demand == pytest.approx(1.2 * 1.15)
    assert host.unit == "TPU host" and host.includes_accelerators and host.on_demand == pytest.approx(4 * 1.2 * 1.15)


def test_parts_no_source_prices_stay_unknown_with_the_reason() -> None:
    assert "a4" in TABLE.machine("a4-highgpu-8g", "us-central1").on_demand_reason
    assert "TPU7x" in TABLE.machine("tpu7x-standard-4t", "us-central1").on_demand_reason
    mega = TABLE.machine("a3-megagpu-8g", "us-central1")
    assert mega.on_demand is None and "H100 Mega rows disagree" in mega.on_demand_reason
    assert TABLE.machine("a3-megagpu-8g", "us-east4").on_demand is not None
    l4 = TABLE.accelerator("NVIDIA_L4", "us-central1")
    assert l4.on_demand is None and "priced with its machine type" in l4.on_demand_reason
    v6e = TABLE.accelerator("TPU v6e", "southamerica-west1")  # SkyPilot's Spot there is the 700
    assert v6e.on_demand == pytest.approx(2.7 * 1.15) and v6e.spot is None and v6e.spot_reason
    assert "not a machine type" in TABLE.machine("n9-mega-1", "us-central1").on_demand_reason


def test_estimates_read_the_refreshed_table_first(tmp_path: Path) -> None:
    refreshed = tmp_path / "prices.json"
    env = {prices.PRICES_FILE_ENV: str(refreshed)}
    assert prices.active_table(env).path == str(prices.BUNDLED)  # none written yet
    data = json.loads(prices.BUNDLED.read_text())
    data.update(kind="refresh", generated="2026-12-01")
    data["machines"]["n1-standard-4"]["regions"]["us-central1"]["od"] = 0.5
    refreshed.write_text(json.dumps(data))
    assert prices.active_table(env).machine("n1-standard-4", "us-central1").on_demand == 0.5
    data["machines"]["n1-standard-4"]["regions"]["us-central1"]["od"] = 0.75  # rewritten: read again
    refreshed.write_text(json.dumps(data, indent=1))
    assert prices.active_table(env).machine("n1-standard-4", "us-central1").on_demand == 0.75
    cache = {"XDG_CACHE_HOME": str(tmp_path)}
    assert prices.refreshed_path(cache) == tmp_path / "gcp-training-jobs" / "prices.json"


def test_a_broken_table_file_is_a_clear_error_naming_the_file_and_the_field(tmp_path: Path) -> None:
    broken = tmp_path / "prices.json"
    broken.write_text("{not json")
    with pytest.raises(PriceTableError, match=r"prices.json: not JSON at line 1"):
        prices.load_table(broken)
    data = json.loads(prices.BUNDLED.read_text())
    data["machines"]["n1-standard-4"]["regions"]["us-central1"].update(od=-1)
    data["accelerators"]["NVIDIA_TESLA_T4"]["regions"]["us-central1"][0].update(spot=None)
    data["format"] = 9
    broken.write_text(json.dumps(data))
    with pytest.raises(PriceTableError) as caught:
        prices.load_table(broken)
    text = str(caught.value)
    assert "format: 9; allowed: 1" in text and "machines.n1-standard-4.regions.us-central1.od: -1" in text
    assert "accelerators.NVIDIA_TESLA_T4.regions.us-central1.why: a missing figure needs its reason" in text


def test_dump_table_refuses_a_malformed_table_and_writes_one_line_per_region() -> None:
    text = prices.BUNDLED.read_text()
    assert prices_build.dump_table(TABLE.data) == text  # the committed file is what the writer writes
    assert '   "us-central1": {"od": 0.21849885, "spot": 0.09550985, "b": ' in text
    bad = json.loads(text)
    bad["bases"] = []
    with pytest.raises(ValueError, match="refusing to write a malformed price table"):
        prices_build.dump_table(bad)


PRICING_YML = """\
about:
  generated: Thu Jul 30 06:13:17 2026
compute:
  instance:
    n1-standard-4:
      cpu: 4
      ram: 15
      cost:
        us-central1: {{hour: {n1}, hour_spot: 0.06701}}
        europe-west4: {{hour: 0.209165, hour_spot: 0.07}}
    g2-standard-8:
      cpu: 8
      ram: 32
      l4: 1
      cost:
        us-central1: {{hour: 0.853624271, hour_spot: 0.479872}}
"""
VMS_CSV = """\
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.35,0.175
,,,T4,2,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.7,0.35
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},europe-west4,europe-west4-a,0.3675,0.175
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},europe-west4,europe-west4-b,0.38,0.175
,,,H100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-central1,us-central1-a,4.2,1.5
,,,tpu-v6e-1,1,tpu-v6e-1,us-central1,us-central1-a,2.7,0.54421
,,,tpu-v6e-4,1,tpu-v6e-4,us-central1,us-central1-a,10.8,2.17683
,,,tpu-v6e-1,1,tpu-v6e-1,asia-east1,asia-east1-c,700.0,700.0
n1-standard-4,4.0,15.0,,,,us-central1,us-central1-a,0.19,0.06
"""


def _generate(tmp_path: Path, n1: str = "0.189999") -> subprocess.CompletedProcess[str]:
    (tmp_path / "pricing.yml").write_text(PRICING_YML.format(n1=n1))
    (tmp_path / "vms.csv").write_text(VMS_CSV)
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_prices.py"), "--cyclenerd", str(tmp_path / "pricing.yml"),
         "--skypilot", str(tmp_path / "vms.csv"), "--output", str(tmp_path / "out.json"), "--today", "2026-11-23"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_the_generator_takes_sources_apart_as_stated(tmp_path: Path) -> None:
    done = _generate(tmp_path)
    assert done.returncode == 0, done.stderr
    table = prices.load_table(tmp_path / "out.json")
    assert table.machine("n1-standard-4", "us-central1").on_demand == 0.21849885
    assert table.machine("n1-standard-4", "asia-east1").on_demand_reason.startswith("Cyclenerd pricing.yml "
                                                                                    "has no n1-standard-4")
    t4 = table.accelerator("NVIDIA_TESLA_T4", "europe-west4")
    assert t4.on_demand == pytest.approx(0.38 * 1.15)  # zones disagree: the highest zone
    assert "zones of europe-west4 disagree on NVIDIA_TESLA_T4" in done.stdout
    assert table.accelerator("NVIDIA_TESLA_T4", "us-central1", 2).on_demand == 0.4025
    assert "set aside tpu-v6e-1 asia-east1-c" in done.stdout  # the 700 placeholder is never a price
    assert table.accelerator("TPU v6e", "asia-east1").on_demand is None
    assert table.machine("ct6e-standard-4t", "us-central1").on_demand == pytest.approx(10.8 * 1.15)
    assert table.accelerator("NVIDIA_H100_80GB", "us-central1").on_demand is None  # rows never read


@pytest.mark.slow
def test_the_generator_stops_when_the_evidence_does_not_reproduce(tmp_path: Path) -> None:
    done = _generate(tmp_path, n1="0.2")
    assert done.returncode != 0 and "evidence does not reproduce: n1-standard-4" in done.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow
def test_the_wheel_ships_the_bundled_table(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (source / name).write_bytes((ROOT / name).read_bytes())
    subprocess.run(["cp", "-r", str(ROOT / "gcp_training_jobs"), str(source / "gcp_training_jobs")], check=True)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))
    assert "gcp_training_jobs/jobspec/catalog/prices_table.json" in zipfile.ZipFile(wheel).namelist()
