"""The emulator's tables held against their sources, so that they cannot drift silently:

- gcp_training_jobs/emulator/enums.py (enum numbers and presence fields, transcribed from the SDK's generated types)
  against the installed google-cloud-aiplatform's own descriptors, and against the discovery document's names;
- gcp_training_jobs/emulator/vertex_limits.py (what Vertex can run, the emulator's own transcription) against the
  client's catalog (gcp_training_jobs/jobspec/catalog/vertex_machines.py), which was read from the same page apart.

A difference fails here, naming what differs: change the table that is wrong, with its source.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.cloud.aiplatform_v1 import types as sdk_types
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from gcp_training_jobs.emulator import discovery, enums, proto_json
from gcp_training_jobs.emulator import vertex_limits as limits
from gcp_training_jobs.jobspec.catalog import vertex_machines as catalog
from gcp_training_jobs.jobspec.catalog import vertex_regions

_PACKAGE = "google.cloud.aiplatform.v1."
#: The resources (and list answers) whose enums the emulator reads and writes.
ROOTS = (sdk_types.CustomJob, sdk_types.HyperparameterTuningJob, sdk_types.PersistentResource,
         sdk_types.ListCustomJobsResponse, sdk_types.ListHyperparameterTuningJobsResponse,
         sdk_types.ListPersistentResourcesResponse)
WRAPPERS = {f"google.protobuf.{n}Value" for n in ("Bool", "Int32", "Int64", "UInt32", "UInt64", "Float", "Double",
                                                  "String", "Bytes")}


def discovery_name(message: Descriptor) -> str:
    """google.cloud.aiplatform.v1.StudySpec.MetricSpec -> GoogleCloudAiplatformV1StudySpecMetricSpec."""
    return "GoogleCloudAiplatformV1" + message.full_name.removeprefix(_PACKAGE).replace(".", "")


def sdk_walk() -> tuple[dict[tuple[str, str], str], dict[str, dict[str, int]], set[tuple[str, str]]]:
    """From the installed SDK's descriptors: (schema, field) -> enum, enum -> name -> number, presence fields."""
    fields: dict[tuple[str, str], str] = {}
    numbers: dict[str, dict[str, int]] = {}
    presence: set[tuple[str, str]] = set()
    seen: set[str] = set()

    def walk(message: Descriptor) -> None:
        if message.full_name in seen or not message.full_name.startswith(_PACKAGE):
            return
        seen.add(message.full_name)
        for field in message.fields:
            key = (discovery_name(message), field.json_name)
            if field.type == FieldDescriptor.TYPE_ENUM:
                fields[key] = field.enum_type.full_name
                numbers[field.enum_type.full_name] = {v.name: v.number for v in field.enum_type.values}
            elif field.message_type is not None:
                if field.message_type.full_name in WRAPPERS:
                    presence.add(key)
                walk(field.message_type)

    for root in ROOTS:
        walk(root.pb().DESCRIPTOR)
    return fields, numbers, presence


SDK_FIELDS, SDK_NUMBERS, SDK_PRESENCE = sdk_walk()


def test_the_enum_fields_are_those_of_the_installed_sdk() -> None:
    assert dict(enums.FIELDS) == SDK_FIELDS


@pytest.mark.parametrize("enum", sorted(SDK_NUMBERS))
def test_each_enum_s_numbers_are_those_of_the_installed_sdk(enum: str) -> None:
    assert dict(enums.ENUMS[enum]) == SDK_NUMBERS[enum]


def test_the_presence_fields_are_the_sdk_s_wrapper_fields() -> None:
    assert enums.PRESENCE_FIELDS == SDK_PRESENCE


def test_the_source_is_named() -> None:
    assert enums.SOURCE["package"] == "google-cloud-aiplatform" and enums.SOURCE["version"]
    assert "google/cloud/aiplatform_v1/types/" in enums.SOURCE["files"] and enums.SOURCE["read"]


@pytest.mark.parametrize(("schema", "field"), sorted(enums.FIELDS))
def test_the_discovery_document_names_the_same_values(schema: str, field: str) -> None:
    """The schema check reads names from the discovery document; the numbers are for the same names."""
    spec: dict[str, Any] = discovery.get_schema("aiplatform", schema)["properties"][field]
    assert set(spec["enum"]) == set(enums.ENUMS[enums.FIELDS[(schema, field)]])


def test_proto3_reading_of_the_sdk_s_to_json() -> None:
    """What to_json() writes for an empty-valued job is, read as proto3, nothing but what was set."""
    job = sdk_types.CustomJob(display_name="x", job_spec=sdk_types.CustomJobSpec(worker_pool_specs=[
        sdk_types.WorkerPoolSpec(machine_spec=sdk_types.MachineSpec(machine_type="n1-standard-4"), replica_count=1)]))
    schema = "GoogleCloudAiplatformV1CustomJob"
    sent = json.loads(sdk_types.CustomJob.to_json(job))
    read = proto_json.unset_defaults("aiplatform", schema, proto_json.enum_names("aiplatform", schema, sent))
    assert read == {"displayName": "x", "jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1"}]}}


def test_proto3_unsets_fields_only() -> None:
    """Fields with default values are unset; list elements, map values, messages and wrappers are values."""
    stopping = {"shouldStopAsap": False, "minNumTrials": 0}  # Int32Value / BoolValue: 0 and false are set
    container = {"args": ["", "a"], "command": [], "env": [{"name": "", "value": "x"}]}
    sent = {
        "displayName": "t", "maxTrialCount": 0, "labels": {},
        "studySpec": {"algorithm": "ALGORITHM_UNSPECIFIED", "metrics": [], "studyStoppingConfig": stopping},
        "trialJobSpec": {"scheduling": {}, "workerPoolSpecs": [{}, {"containerSpec": container}]},
    }
    read = {"args": ["", "a"], "env": [{"value": "x"}]}
    assert proto_json.unset_defaults("aiplatform", "GoogleCloudAiplatformV1HyperparameterTuningJob", sent) == {
        "displayName": "t",
        "studySpec": {"studyStoppingConfig": stopping},
        "trialJobSpec": {"scheduling": {}, "workerPoolSpecs": [{}, {"containerSpec": read}]},
    }


# ------------------------------------------------------------------------ vertex_limits against the catalog


def test_fixed_gpu_machine_types_agree() -> None:
    theirs = {t: (m.accelerator, m.count) for t, m in catalog.FIXED_ACCELERATOR_MACHINES.items()}
    assert dict(limits.FIXED_GPUS) == theirs


def test_n1_gpu_counts_agree() -> None:
    ours = {t: dict(row) for t, row in limits.N1_GPU_COUNTS.items()}
    assert ours == {t: dict(row) for t, row in catalog.N1_GPU_COUNTS.items()}


def test_machine_types_without_accelerators_agree() -> None:
    assert limits.PLAIN_MACHINE_TYPES == catalog.CPU_MACHINE_TYPES


def test_cloud_tpu_counts_agree() -> None:
    assert limits.CLOUD_TPU == catalog.CLOUD_TPU_MACHINE
    assert set(limits.CLOUD_TPU_COUNTS) == set(catalog.CLOUD_TPU_ACCELERATOR_COUNTS)
    for accelerator, (single, pod, step) in limits.CLOUD_TPU_COUNTS.items():
        assert (single, pod) == catalog.CLOUD_TPU_ACCELERATOR_COUNTS[accelerator]
        assert single == catalog.CLOUD_TPU_SINGLE_COUNT
        assert (step == pod) == ("multiple" in catalog.CLOUD_TPU_POD_COUNT_RULE[accelerator])


def test_tpu_pod_regions_agree() -> None:
    """Where each TPU type's Pods run: the emulator's transcription and the catalog's, read from the locations page
    apart; every region running a Pod runs its single TPU too."""
    assert {r: set(kinds) for r, kinds in limits.TPU_POD_REGIONS.items()} == \
        {r: set(kinds) for r, kinds in vertex_regions.REGION_TPU_PODS.items()}
    for region, kinds in limits.TPU_POD_REGIONS.items():
        assert set(kinds) <= set(limits.CLOUD_TPU_COUNTS) and set(kinds) <= vertex_regions.REGION_ACCELERATORS[region]


def test_tpu_vm_topologies_agree() -> None:
    assert dict(limits.TPU_VM_TOPOLOGIES) == {t: (h.accelerator, h.topologies) for t, h in catalog.TPU_HOSTS.items()}
    assert {(t, topology) for t, (_, shapes) in limits.TPU_VM_TOPOLOGIES.items() for topology in shapes} == set(
        catalog.TPU_SLICES)


def test_every_machine_type_of_either_is_in_both() -> None:
    from gcp_training_jobs.jobspec import catalog as whole

    assert set(whole.VERTEX_MACHINE_TYPES) == limits.MACHINE_TYPES


def test_every_accelerator_the_limits_name_is_in_the_api_s_enum() -> None:
    names = set(enums.ENUMS[_PACKAGE + "AcceleratorType"])
    named = {a for t in limits.MACHINE_TYPES for a in limits.accelerators(t)}
    assert named and named <= names, named - names
