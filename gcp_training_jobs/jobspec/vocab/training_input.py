"""Typed models of a training job in the AI Platform Training v1 REST vocabulary (ml.v1.json).

A gcloud `config.yaml` is a Job (`trainingInput:` and friends) and parses here as it is. Field names
are camelCase on the wire and snake_case in Python; unknown keys are rejected. The models check shape
and types only; what the values may be (machine types, GPU counts, regions...) is judged by
gcp_training_jobs.jobspec.rules
against the catalog, so every problem of a spec is reported in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
)
from pydantic.alias_generators import to_camel

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.legacy import ROLES
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import TRAINING_INPUT
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error


def _integral(value: Any) -> Any:
    """Accept 8, 8.0 and "8" (int64 travels as a JSON string; Pulumi turns 8 into 8.0); refuse bools."""
    if isinstance(value, bool):
        raise ValueError("expected an integer, not a boolean")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


#: An int64 field: an integer in Python, a decimal string in the JSON body (as ml.v1.json says).
Int64 = Annotated[int, BeforeValidator(_integral), PlainSerializer(str, return_type=str, when_used="json")]
#: An int32 field: an integer both ways.
Int32 = Annotated[int, BeforeValidator(_integral)]


class WireModel(BaseModel):
    """Base of every model: camelCase aliases, snake_case accepted too, unknown keys refused."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        strict=False,
    )


class AcceleratorConfig(WireModel):
    """GPUs or TPU cores attached to one replica (Compute Engine machine types and cloud_tpu only)."""

    type: str | None = None
    count: Int64 | None = None


class DiskConfig(WireModel):
    """Boot disk of each replica."""

    boot_disk_type: str | None = None
    boot_disk_size_gb: Int32 | None = None


class ReplicaConfig(WireModel):
    """masterConfig / workerConfig / parameterServerConfig / evaluatorConfig."""

    accelerator_config: AcceleratorConfig | None = None
    image_uri: str | None = None
    tpu_tf_version: str | None = None
    container_command: list[str] | None = None
    container_args: list[str] | None = None
    disk_config: DiskConfig | None = None


class Scheduling(WireModel):
    """Limits on how long the job may wait and run (google-duration strings, e.g. "7200s")."""

    max_running_time: str | None = None
    max_wait_time: str | None = None
    priority: Int32 | None = None


class EncryptionConfig(WireModel):
    """Customer-managed encryption key for the job's resources."""

    kms_key_name: str | None = None


def _double(value: Any) -> Any:
    """A finite number (YAML decimals arrive as text, "0.01"); refuse booleans, which pydantic takes as 1/0."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number; allowed: a number (e.g. 0.01)")
    if isinstance(value, (float, str)):
        try:
            number = float(value)
        except ValueError:
            return value  # pydantic says it is not a number
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError("not a finite number; allowed: a finite number (e.g. 0.01)")
    return value


#: An ml v1 `double`: a finite number, never a boolean.
Double = Annotated[float, BeforeValidator(_double)]


class ParameterSpec(WireModel):
    """One hyperparameter to tune (ml v1 ParameterSpec). Which fields a type needs is judged by
    gcp_training_jobs.jobspec.rules.tuning, so a missing name or type is reported with what is allowed."""

    parameter_name: str | None = None
    type: str | None = None
    min_value: Double | None = None
    max_value: Double | None = None
    discrete_values: list[Double] | None = None
    categorical_values: list[str] | None = None
    scale_type: str | None = None


class HyperparameterSpec(WireModel):
    """Hyperparameter tuning (ml v1 HyperparameterSpec). `goal` and `params` are required except in the
    documented resume form (`resumePreviousJobId`), which takes them from the previous job's study; the
    rules in gcp_training_jobs.jobspec.rules.tuning judge that, so the model leaves both optional."""

    goal: str | None = None
    params: list[ParameterSpec] | None = None
    max_trials: Int32 | None = None
    max_parallel_trials: Int32 | None = None
    max_failed_trials: Int32 | None = None
    hyperparameter_metric_tag: str | None = None
    algorithm: str | None = None
    enable_trial_early_stopping: bool | None = None
    resume_previous_job_id: str | None = None


class TrainingInput(WireModel):
    """ml v1 TrainingInput: the cluster, the code, and where it runs."""

    scale_tier: str | None = None
    master_type: str | None = None
    worker_type: str | None = None
    parameter_server_type: str | None = None
    evaluator_type: str | None = None
    master_config: ReplicaConfig | None = None
    worker_config: ReplicaConfig | None = None
    parameter_server_config: ReplicaConfig | None = None
    evaluator_config: ReplicaConfig | None = None
    worker_count: Int64 | None = Field(default=None, ge=0)
    parameter_server_count: Int64 | None = Field(default=None, ge=0)
    evaluator_count: Int64 | None = Field(default=None, ge=0)
    region: str | None = None
    runtime_version: str | None = None
    python_version: str | None = None
    package_uris: list[str] | None = None
    python_module: str | None = None
    args: list[str] | None = None
    job_dir: str | None = None
    scheduling: Scheduling | None = None
    network: str | None = None
    service_account: str | None = None
    encryption_config: EncryptionConfig | None = None
    use_chief_in_tf_config: bool | None = None
    enable_web_access: bool | None = None
    hyperparameters: HyperparameterSpec | None = None

    @cached_property
    def tasks(self) -> tuple[Task, ...]:
        """The four task roles as written, in catalog.ROLES order. Computed once per model (every rule asks for
        them); the model is the one judged, so nothing is shared between jobs, calls or threads."""
        return tuple(Task(r, self.role_type(r), self.role_config(r), self.role_count(r)) for r in ROLES)

    def role_type(self, role: str) -> str | None:
        """masterType / workerType / parameterServerType / evaluatorType by role name."""
        value: str | None = getattr(self, _role_fields(role)[0])
        return value

    def role_config(self, role: str) -> ReplicaConfig | None:
        value: ReplicaConfig | None = getattr(self, _role_fields(role)[1])
        return value

    def role_count(self, role: str) -> int | None:
        """Replica count of a role; the master is always one."""
        if role == "master":
            return 1
        value: int | None = getattr(self, _role_fields(role)[2])
        return value


#: catalog.COMPUTE_ENGINE_TYPES as a set: each task of each job asks whether its type is one.
_COMPUTE_ENGINE_TYPES = frozenset(catalog.COMPUTE_ENGINE_TYPES)


@dataclass(frozen=True)
class Task:
    """One task role of the job as written: master, worker, parameterServer or evaluator."""

    role: str
    machine_type: str | None
    config: ReplicaConfig | None
    count: int | None

    @property
    def type_path(self) -> str:
        return f"{TRAINING_INPUT}.{self.role}Type"

    @property
    def config_path(self) -> str:
        return f"{TRAINING_INPUT}.{self.role}Config"

    @property
    def count_path(self) -> str:
        return f"{TRAINING_INPUT}.{self.role}Count"

    @property
    def accelerator(self) -> AcceleratorConfig | None:
        return self.config.accelerator_config if self.config else None

    @property
    def is_compute_engine(self) -> bool:
        return self.machine_type in _COMPUTE_ENGINE_TYPES

    @property
    def is_legacy(self) -> bool:
        return self.machine_type in catalog.LEGACY_GPUS

    @property
    def is_tpu(self) -> bool:
        return self.machine_type == catalog.CLOUD_TPU

    @property
    def runs(self) -> bool:
        """Whether this role gets any machine: the master always, others with a positive count."""
        return self.role == "master" or (self.count or 0) > 0


class Job(WireModel):
    """ml v1 Job as a user writes it: output-only fields (state, createTime...) are not accepted."""

    job_id: str | None = None
    labels: dict[str, str] | None = None
    training_input: TrainingInput


_SNAKE = {"parameterServer": "parameter_server"}


def _snake(role: str) -> str:
    return _SNAKE.get(role, role)


@lru_cache(maxsize=8)
def _role_fields(role: str) -> tuple[str, str, str]:
    """A role's type, config and count fields (`parameter_server_type`, ...): spelled once per role and process, as
    every rule asks for them (the roles are catalog.ROLES, so the cache holds four entries)."""
    snake = _snake(role)
    return f"{snake}_type", f"{snake}_config", f"{snake}_count"


def parse_job(data: Any) -> Job:
    """Parse a Job mapping, raising SpecError with every shape problem (paths in wire names)."""
    if not isinstance(data, dict):
        raise SpecError([Problem("", f"expected a mapping with trainingInput, got {type(data).__name__}")])
    try:
        return Job.model_validate(data)
    except ValidationError as error:
        raise SpecError(from_validation_error(error, Job)) from None


def job_body(job: Job) -> dict[str, Any]:
    """The ml v1 request body: wire names, int64 as strings, empty fields left out."""
    return _prune(job.model_dump(mode="json", by_alias=True, exclude_none=True))


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        pruned = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value
