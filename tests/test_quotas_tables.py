"""The emulator's transcription of Vertex AI's custom training quotas (gcp_training_jobs/emulator/capacity.py) held
against the client's catalog (gcp_training_jobs/jobspec/catalog/quotas.py), read from the same sources apart: a
change to either that the other does not make fails here, naming what differs. The metric names are held against
their form too."""

from __future__ import annotations

import re

import pytest

from gcp_training_jobs.emulator import capacity
from gcp_training_jobs.jobspec.catalog import quotas as catalog
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.translate.facts import facts_of_body

METRIC = re.compile(r"custom_model_training_(?:nvidia_[a-z0-9_]+_gpus|tpu_v[0-9a-z]+|cpus)")


def test_the_accelerator_metrics_are_the_same_in_both_transcriptions() -> None:
    assert dict(capacity.ACCELERATOR_METRICS) == dict(catalog.ACCELERATOR_METRICS)


def test_the_cpu_metric_and_the_families_it_counts_are_the_same() -> None:
    assert capacity.CPU_METRIC == catalog.CPU_METRIC
    for machine in ("n1-standard-8", "n1-highmem-96", "e2-highcpu-32", "e2-standard-4"):
        assert capacity.CPU_MACHINE.fullmatch(machine) and catalog.CPU_MACHINE.fullmatch(machine), machine
    for machine in ("g2-standard-8", "a2-ultragpu-8g", "n2-standard-8", "e2-medium", "cloud-tpu"):
        assert not capacity.CPU_MACHINE.fullmatch(machine) and not catalog.CPU_MACHINE.fullmatch(machine), machine


def test_every_metric_has_the_form_vertex_names_its_training_quotas_by() -> None:
    for metric in (*catalog.ACCELERATOR_METRICS.values(), catalog.CPU_METRIC):
        assert METRIC.fullmatch(metric), metric
        twin = catalog.preemptible(metric)
        assert twin == capacity.preemptible(metric) == metric.replace("training_", "training_preemptible_", 1)
        assert catalog.preemptible(twin) == twin  # already preemptible: unchanged


def test_the_quota_message_is_what_the_client_reads_a_quota_refusal_by() -> None:
    message = capacity.quota_message(["custom_model_training_cpus", "custom_model_training_nvidia_t4_gpus"])
    assert message.startswith(catalog.QUOTA_EXCEEDED_PREFIX)
    assert message.endswith("aiplatform.googleapis.com/custom_model_training_cpus,"
                            "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus")
    assert capacity.SERVICE == catalog.SERVICE


@pytest.mark.parametrize("strategy", [None, "STANDARD", "SPOT", "FLEX_START"])
def test_both_sides_count_a_job_alike(strategy: str | None) -> None:
    """What the emulator counts against its limits is what the client's check adds up, for one body."""
    spec = {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                         "acceleratorCount": 2}, "replicaCount": "1"},
        {"machineSpec": {"machineType": "n1-highmem-16", "acceleratorType": "NVIDIA_TESLA_T4",
                         "acceleratorCount": 1}, "replicaCount": "3"},
        {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
         "replicaCount": "2"},
    ]}
    if strategy:
        spec["scheduling"] = {"strategy": strategy}
    body = {"jobSpec": spec}
    client = {catalog.full_name(m): n for m, n in needs_of(facts_of_body(body)).units.items()}
    assert client == capacity.needs(body)
    twin = "preemptible_" if strategy in ("SPOT", "FLEX_START") else ""
    assert client == {f"aiplatform.googleapis.com/custom_model_training_{twin}nvidia_t4_gpus": 5,
                      f"aiplatform.googleapis.com/custom_model_training_{twin}cpus": 8 + 48,
                      f"aiplatform.googleapis.com/custom_model_training_{twin}nvidia_l4_gpus": 2}


@pytest.mark.parametrize("affinity", ["SPECIFIC_RESERVATION", "ANY_RESERVATION", "NO_RESERVATION"])
def test_both_sides_count_a_pool_on_a_reservation_alike(affinity: str) -> None:
    """A pool on a named reservation holds no custom training quota on either side; one that may fall back to on
    demand (ANY_RESERVATION) is counted."""
    reserved = {"reservationAffinityType": affinity}
    if affinity == "SPECIFIC_RESERVATION":
        reserved |= {"key": "compute.googleapis.com/reservation-name",
                     "values": ["projects/p/zones/us-central1-a/reservations/r"]}
    body = {"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1,
                         "reservationAffinity": reserved}, "replicaCount": "2"},
        {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1"}]}}
    client = {catalog.full_name(m): n for m, n in needs_of(facts_of_body(body)).units.items()}
    assert client == capacity.needs(body)
    l4 = 0 if affinity == "SPECIFIC_RESERVATION" else 2
    expected = {"aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus": l4,
                "aiplatform.googleapis.com/custom_model_training_cpus": 4}
    assert client == {metric: units for metric, units in expected.items() if units}
    assert capacity.RESERVED_ONLY == catalog.RESERVED_ONLY_AFFINITY


def test_every_table_names_its_sources() -> None:
    for source in catalog.SOURCES:
        assert source.title and source.read and source.url.startswith("https://")
    assert catalog.ACCELERATOR_METRICS_SOURCES and catalog.PREEMPTIBLE_SOURCES
