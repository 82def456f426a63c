"""Vertex AI v1 enum numbers and presence fields, as data: what the real API takes when a client sends enums as
numbers (`"acceleratorType": 11`) and answers with when asked `$alt=json;enum-encoding=int`.

The numbers are the proto field numbers, not the order of the discovery document's `enum` lists (which the
emulator's schema check reads): NVIDIA_L4 is the 9th name in the discovery list but 11 on the wire, FLEX_START
is 6 (there is no 5), GRID_SEARCH is 2 (there is no 1).

Source (transcribed by hand, read 2026-11-23; PersistentResource.State read 2026-11-26): the generated proto types
of the Vertex AI SDK, package google-cloud-aiplatform 2.7.0 (PyPI), files google/cloud/aiplatform_v1/types/
accelerator_type.py (AcceleratorType), job_state.py (JobState), persistent_resource.py (PersistentResource.State:
there is no 2), reservation_affinity.py (ReservationAffinity.Type), custom_job.py (Scheduling.Strategy) and study.py
(StudySpec.Algorithm, .ObservationNoise, .MeasurementSelectionType, .MetricSpec.GoalType, .ParameterSpec.ScaleType,
Trial.State). `tests/test_emulator_sdk_tables.py` holds these
tables against the installed SDK, so a new SDK release that changes them fails a test instead of drifting.
The emulator never imports the SDK: it must start with the standard library only.

Only the enums reachable from a CustomJob, a HyperparameterTuningJob or a PersistentResource (and their list
answers) are here; the ml v1 API has no generated proto types to read its numbers from, so it keeps taking names
only.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

SOURCE: Final = MappingProxyType({
    "package": "google-cloud-aiplatform",
    "version": "2.7.0",
    "files": "google/cloud/aiplatform_v1/types/{accelerator_type,job_state,persistent_resource,reservation_affinity,"
             "custom_job,study}.py",
    "read": "2026-11-23",
})

_V1 = "google.cloud.aiplatform.v1."

#: Proto enum full name -> value name -> number.
ENUMS: Final = MappingProxyType({
    _V1 + "AcceleratorType": MappingProxyType({
        "ACCELERATOR_TYPE_UNSPECIFIED": 0, "NVIDIA_TESLA_K80": 1, "NVIDIA_TESLA_P100": 2, "NVIDIA_TESLA_V100": 3,
        "NVIDIA_TESLA_P4": 4, "NVIDIA_TESLA_T4": 5, "TPU_V2": 6, "TPU_V3": 7, "NVIDIA_TESLA_A100": 8,
        "NVIDIA_A100_80GB": 9, "TPU_V4_POD": 10, "NVIDIA_L4": 11, "TPU_V5_LITEPOD": 12, "NVIDIA_H100_80GB": 13,
        "NVIDIA_H100_MEGA_80GB": 14, "NVIDIA_H200_141GB": 15, "NVIDIA_B200": 16, "NVIDIA_GB200": 17,
        "NVIDIA_RTX_PRO_6000": 18,
    }),
    _V1 + "JobState": MappingProxyType({
        "JOB_STATE_UNSPECIFIED": 0, "JOB_STATE_QUEUED": 1, "JOB_STATE_PENDING": 2, "JOB_STATE_RUNNING": 3,
        "JOB_STATE_SUCCEEDED": 4, "JOB_STATE_FAILED": 5, "JOB_STATE_CANCELLING": 6, "JOB_STATE_CANCELLED": 7,
        "JOB_STATE_PAUSED": 8, "JOB_STATE_EXPIRED": 9, "JOB_STATE_UPDATING": 10, "JOB_STATE_PARTIALLY_SUCCEEDED": 11,
    }),
    _V1 + "ReservationAffinity.Type": MappingProxyType({
        "TYPE_UNSPECIFIED": 0, "NO_RESERVATION": 1, "ANY_RESERVATION": 2, "SPECIFIC_RESERVATION": 3,
    }),
    _V1 + "Scheduling.Strategy": MappingProxyType({
        "STRATEGY_UNSPECIFIED": 0, "ON_DEMAND": 1, "LOW_COST": 2, "STANDARD": 3, "SPOT": 4, "FLEX_START": 6,
    }),
    _V1 + "StudySpec.Algorithm": MappingProxyType({
        "ALGORITHM_UNSPECIFIED": 0, "GRID_SEARCH": 2, "RANDOM_SEARCH": 3,
    }),
    _V1 + "StudySpec.ObservationNoise": MappingProxyType({
        "OBSERVATION_NOISE_UNSPECIFIED": 0, "LOW": 1, "HIGH": 2,
    }),
    _V1 + "StudySpec.MeasurementSelectionType": MappingProxyType({
        "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED": 0, "LAST_MEASUREMENT": 1, "BEST_MEASUREMENT": 2,
    }),
    _V1 + "StudySpec.MetricSpec.GoalType": MappingProxyType({
        "GOAL_TYPE_UNSPECIFIED": 0, "MAXIMIZE": 1, "MINIMIZE": 2,
    }),
    _V1 + "StudySpec.ParameterSpec.ScaleType": MappingProxyType({
        "SCALE_TYPE_UNSPECIFIED": 0, "UNIT_LINEAR_SCALE": 1, "UNIT_LOG_SCALE": 2, "UNIT_REVERSE_LOG_SCALE": 3,
    }),
    _V1 + "PersistentResource.State": MappingProxyType({
        "STATE_UNSPECIFIED": 0, "PROVISIONING": 1, "RUNNING": 3, "STOPPING": 4, "ERROR": 5, "REBOOTING": 6,
        "UPDATING": 7,
    }),
    _V1 + "Trial.State": MappingProxyType({
        "STATE_UNSPECIFIED": 0, "REQUESTED": 1, "ACTIVE": 2, "STOPPING": 3, "SUCCEEDED": 4, "INFEASIBLE": 5,
    }),
})

_D = "GoogleCloudAiplatformV1"

#: (discovery schema, JSON field) -> the proto enum its values come from.
FIELDS: Final = MappingProxyType({
    (_D + "MachineSpec", "acceleratorType"): _V1 + "AcceleratorType",
    (_D + "ReservationAffinity", "reservationAffinityType"): _V1 + "ReservationAffinity.Type",
    (_D + "Scheduling", "strategy"): _V1 + "Scheduling.Strategy",
    (_D + "CustomJob", "state"): _V1 + "JobState",
    (_D + "HyperparameterTuningJob", "state"): _V1 + "JobState",
    (_D + "StudySpec", "algorithm"): _V1 + "StudySpec.Algorithm",
    (_D + "StudySpec", "observationNoise"): _V1 + "StudySpec.ObservationNoise",
    (_D + "StudySpec", "measurementSelectionType"): _V1 + "StudySpec.MeasurementSelectionType",
    (_D + "StudySpecMetricSpec", "goal"): _V1 + "StudySpec.MetricSpec.GoalType",
    (_D + "StudySpecParameterSpec", "scaleType"): _V1 + "StudySpec.ParameterSpec.ScaleType",
    (_D + "Trial", "state"): _V1 + "Trial.State",
    (_D + "PersistentResource", "state"): _V1 + "PersistentResource.State",
})

#: Scalar-looking JSON fields that are messages in the proto (google.protobuf.Int32Value / BoolValue wrappers),
#: so they have presence: 0 or false is a value, not "unset". Source: study.py, StudySpec.StudyStoppingConfig.
PRESENCE_FIELDS: Final = frozenset({
    (_D + "StudySpecStudyStoppingConfig", "shouldStopAsap"),
    (_D + "StudySpecStudyStoppingConfig", "minNumTrials"),
    (_D + "StudySpecStudyStoppingConfig", "maxNumTrials"),
    (_D + "StudySpecStudyStoppingConfig", "maxNumTrialsNoProgress"),
})


def numbers(schema: str, field: str) -> MappingProxyType[str, int] | None:
    """The name -> number map of an enum field (None when the field has no known numbers)."""
    enum = FIELDS.get((schema, field))
    return ENUMS[enum] if enum is not None else None
