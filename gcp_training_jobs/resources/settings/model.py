"""The stack's settings as one validated tree of models (the keys of `gcp-training-jobs:*`).

Only shapes and syntax are judged here; the reading of a stack file or of `pulumi.Config` lives in the
source modules beside this one, and judging the jobs against the spec rules in jobs.py (judge.py judges the
stack).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr

from gcp_training_jobs.jobspec.core.names import (
    BUCKET_NAME,
    DEFAULT_BACKEND,
    DEFAULT_REGION,
    LOCATION,
    PROJECT_ID,
    SERVICE_ACCOUNT,
)
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.load import Judged
from gcp_training_jobs.jobspec.rules import uses_tpu
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.translate.pools import Pool
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job, WireModel
from gcp_training_jobs.resources.job_model.declared import FALLBACKS_BOUND, RerunToken, Retries, Seconds
from gcp_training_jobs.resources.settings.budget import BudgetField
from gcp_training_jobs.resources.settings.guardrails import GuardrailSettings
from gcp_training_jobs.resources.settings.placement import PlacementSettings, none_when_empty
from gcp_training_jobs.resources.settings.secrets import OPAQUE
from gcp_training_jobs.resources.trainer_source import TrainerSource

#: Where a job's args may name its job dir (the TPU guide's `--model_dir=$OUTPUT_PATH`).
JOB_DIR_PLACEHOLDER = "${jobDir}"


def _pattern(regex: re.Pattern[str], what: str) -> Any:
    """An AfterValidator: the text matches `regex` (opaque secrets pass: they cannot be judged offline)."""

    def check(value: str) -> str:
        if value != OPAQUE and not regex.fullmatch(value):
            raise ValueError(f"not {what}")
        return value

    return AfterValidator(check)


def _bucket_name(value: str) -> str:
    if value.startswith("gs://"):
        raise ValueError(f"give the bucket's name without gs:// (e.g. {value[5:].split('/')[0]!r})")
    if value != OPAQUE and (not BUCKET_NAME.fullmatch(value) or value.startswith("goog")):
        raise ValueError("not a bucket name; allowed: 3 to 63 lowercase letters, digits, -, _ and ., "
                         "starting and ending with a letter or digit")
    return value


def _grant(value: Any) -> Any:
    """tpuAccess.grant: auto, true or false (booleans as YAML or Pulumi write them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.lower() in ("auto", "true", "false"):
        return value.lower()
    raise ValueError("allowed: auto (grant when the backend is ai-platform and a job uses a TPU), true, false")


ProjectId = Annotated[str, _pattern(PROJECT_ID, "a Google Cloud project id (6 to 30 lowercase letters, "
                                                 "digits and hyphens, starting with a letter)")]
BucketName = Annotated[str, AfterValidator(_bucket_name)]
ServiceAccount = Annotated[str, _pattern(SERVICE_ACCOUNT, "a Google service account email "
                                                                 "(NAME@DOMAIN.gserviceaccount.com)")]


def _endpoint(value: str) -> str:
    """Credentials go only to Google's API hosts over TLS (or a host $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS
    names), or to loopback, the emulator, which gets anonymous ones (jobspec/core/endpoints.py). The refusal never
    holds the endpoint's user name or password."""
    from gcp_training_jobs.backends.transport import endpoint_problem

    problem = endpoint_problem(value, named=False) if value != OPAQUE else None
    if problem is not None:
        raise ValueError(problem)
    return value


Endpoint = Annotated[str, AfterValidator(_endpoint)]
Location = Annotated[str, _pattern(LOCATION, "a Cloud Storage location, e.g. US-CENTRAL1 or US")]
Grant = Annotated[Literal["auto", "true", "false"], BeforeValidator(_grant)]


def _uses_tpu(job: JobSettings) -> bool:
    """A TPU tier or cloud_tpu worker (trainingInput), or a pool on TPUs (CustomJobSpec: its pools as judged)."""
    if isinstance(job.job, Job):
        return uses_tpu(job.job.training_input)
    return any(pool.is_tpu for pool in job.facts.running)


class SettingsModel(WireModel):
    """Base of the settings tree: camelCase keys as written in stack files, unknown keys refused (the same
    conventions as the job spec's models)."""

    def _holding(self, **found: Any) -> Self:
        """A copy holding what the settings' judge found of it, by the private attribute's name (`_resources=...`);
        the rest of what it holds is copied as it is."""
        held = self.model_copy()
        for name, value in found.items():
            assert name in self.__private_attributes__, name  # a name this model declares, never a new one
            setattr(held, name, value)
        return held


class BucketSettings(SettingsModel):
    """`gcp-training-jobs:buckets`: the staging and job-dir buckets, created unless named here."""

    staging: BucketName | None = None
    """An existing bucket for trainer packages; omitted: the stack creates one."""
    job_dir: BucketName | None = None
    """An existing bucket for job outputs and checkpoints; omitted: the stack creates one (versioned)."""
    location: Location | None = None
    """Where created buckets live; omitted: the stack's region (a region bucket next to the jobs)."""
    staging_retention_days: int = Field(default=30, ge=0, le=36500)
    """Created staging bucket: objects older than this are deleted (0: kept forever)."""
    noncurrent_retention_days: int = Field(default=30, ge=0, le=36500)
    """Created job-dir bucket: overwritten checkpoint versions are kept this long (0: forever)."""
    force_destroy: bool = False
    """Whether `pulumi destroy` may delete created buckets that still hold objects."""


class TpuAccessSettings(SettingsModel):
    """`gcp-training-jobs:tpuAccess`: granting the Cloud TPU service account roles/ml.serviceAgent (the AI Platform
    Training TPU guide)."""

    grant: Grant = "auto"
    """auto: when the backend is ai-platform and a job uses a TPU; true: always; false: never."""
    service_account: ServiceAccount | None = None
    """The TPU service account, if known; omitted: looked up with projects.getConfig at apply."""


class FallbackMachine(SettingsModel):
    """`jobs.NAME.fallbacks[i].machineSpec`: the machine of the pools that hold accelerators
    (gcp_training_jobs.resources.fallbacks)."""

    machine_type: str | None = None
    accelerator_type: str | None = None
    accelerator_count: int | None = Field(default=None, ge=0)


class FallbackScheduling(SettingsModel):
    """`jobs.NAME.fallbacks[i].scheduling`: the strategy of a jobSpec job (STANDARD, SPOT, FLEX_START)."""

    strategy: str


class FallbackSettings(SettingsModel):
    """One alternative of `jobs.NAME.fallbacks`: where, on what and how the job may run instead, when Google has no
    quota or capacity for what comes before it (judged, priced and guardrailed like the job itself)."""

    region: str | None = None
    machine_spec: FallbackMachine | None = None
    scheduling: FallbackScheduling | None = None

    def wire(self) -> dict[str, Any]:
        """The alternative as the provider takes it (camelCase, unset keys left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class JobSettings(SettingsModel):
    """One job of `gcp-training-jobs:jobs`: the job in one of three forms (exactly one of trainingInput, jobSpec and
    tuningJob), where it runs, plus where its code comes from and how the stack treats it."""

    training_input: dict[str, Any] | None = None
    """AI Platform Training's trainingInput, a gcloud config.yaml job (judged by
    gcp_training_jobs.jobspec.load.load_job)."""
    job_spec: dict[str, Any] | None = None
    """A Vertex AI CustomJobSpec, as `gcloud ai custom-jobs create --config` reads it (judged by
    gcp_training_jobs.jobspec.load.load_custom_job in the stack's region); backend vertex only."""
    tuning_job: dict[str, Any] | None = None
    """A Vertex AI tuning config (a HyperparameterTuningJob: studySpec, trialJobSpec, maxTrialCount, ...), as `gcloud
    ai hp-tuning-jobs create --config` reads it (judged by gcp_training_jobs.jobspec.load.judge, as the file on its own
    is); backend vertex only."""
    region: str | None = None
    """Where a jobSpec or tuningJob job runs (default: the stack's region); a trainingInput's region is
    trainingInput.region (given here too, it must be the same)."""
    labels: dict[str, str] | None = None
    """The job's labels (the stack's labels are added under them)."""
    trainer: TrainerSource | None = None
    """Trainer code built and uploaded by the stack (into trainingInput.packageUris, or every
    pythonPackageSpec.packageUris of a jobSpec); else package URIs given or a container image."""
    wait_for_completion: bool = False
    """Whether `pulumi up` waits until the job ends."""
    wait_timeout_seconds: Seconds | None = None
    """How long `pulumi up` waits at most (default: 24 hours)."""
    protect: bool | None = None
    """Refuse to replace or delete this job while it is QUEUED, PREPARING or RUNNING (default:
    guardrails.protectJobs)."""
    retain_on_delete: bool = False
    """Leave the job running when it leaves the stack (or the stack is destroyed) instead of cancelling it."""
    delete_record_on_delete: bool = False
    """Also remove a finished job's record from Vertex AI when the job is replaced, leaves the stack or the stack is
    destroyed (default: every record stays, the job's history for `status --all` and `spend`)."""
    fallbacks: Annotated[list[FallbackSettings], FALLBACKS_BOUND] | None = None
    """Where else the job may run, in order, when a placement's quota, read at create, cannot hold the job, a create
    is refused for quota or capacity, or the job fails for capacity before it ran (README, "When Google has no
    capacity")."""
    retries: Retries | None = None
    """How many times a job that failed for Google's reasons (capacity, preemption, internal faults) is made again
    (default DEFAULT_RETRIES); a failure of the user's code never is."""
    rerun: RerunToken | None = None
    """Any text: changing it replaces the job with a fresh run of the same spec."""
    # -- placement (settings/placement.py) --
    placement: Literal["cheapest"] | None = None
    """cheapest: the stack's placement candidates are the job's placements, cheapest first (not with fallbacks)."""

    _judged: Judged = PrivateAttr()
    _alternatives: tuple[Judged, ...] = PrivateAttr(default=())

    def judged_as(self, judged: Judged, alternatives: tuple[Judged, ...] = ()) -> JobSettings:
        """A copy that holds the job as it was judged (load.Judged, read once: its model with the stack's labels and
        region filled in, its body, pools and facts, its warnings named at the stack file's keys) and each of its
        `fallbacks` as judged by the same pass. The settings' judge is the one caller: a stack's jobs are judged."""
        return self._holding(_judged=judged, _alternatives=alternatives)

    @property
    def judged(self) -> Judged:
        """The job as it was judged (load.Judged)."""
        return self._judged

    @property
    def facts(self) -> JobFacts:
        """What every later stage asks of the job (load.Judged.facts): region, strategy, accelerators, ..."""
        return self._judged.facts

    @property
    def pools(self) -> tuple[Pool, ...]:
        """The job's worker pools as it was judged (load.Judged.pools: Vertex AI's, or AI Platform's)."""
        return self._judged.pools

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """What the job's translation changed that its author should know (it does not stop the job)."""
        return self._judged.warnings

    @property
    def alternatives(self) -> tuple[Judged, ...]:
        """Each `fallbacks` entry as judged (its facts carry its region)."""
        return self._alternatives

    @property
    def job(self) -> Job | VertexJob | TuningJob:
        """The validated job (spec model), with the stack's labels and region filled in."""
        job = self._judged.job
        assert isinstance(job, Job | VertexJob | TuningJob)  # a stack's job: trainingInput, jobSpec or tuningJob
        return job

    @property
    def body(self) -> Mapping[str, Any]:
        """The request body the job was judged with (the trainer package and job dir the stack fills in later
        stand in as placeholders; the machines, accelerators and scheduling are the job's)."""
        assert self._judged.body is not None  # a stack's job is held only once it judged without a problem
        return self._judged.body


class StackSettings(SettingsModel):
    """The whole config of a stack, validated."""

    backend: Literal["ai-platform", "vertex"] = DEFAULT_BACKEND
    """The training API: vertex (Vertex AI custom jobs) or ai-platform (AI Platform Training v1, shut down
    by Google on 2025-01-31; for the emulator and exemptions)."""
    project: ProjectId
    """The Google Cloud project (gcp-training-jobs:project, else gcp:project)."""
    region: str = DEFAULT_REGION
    """Default region of the jobs and the buckets' location (gcp-training-jobs:region, else gcp:region)."""
    api_endpoint: Endpoint | None = None
    """Override of the training API endpoint (the loopback emulator); read by the providers' configure()."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels on every bucket and job."""
    buckets: BucketSettings = Field(default_factory=BucketSettings)
    tpu_access: TpuAccessSettings = Field(default_factory=TpuAccessSettings)
    guardrails: GuardrailSettings = Field(default_factory=GuardrailSettings)
    """The stack's own rules on its jobs (gcp_training_jobs.jobspec.review.guardrails)."""
    budget: BudgetField = None
    """The stack's monthly budget (settings.budget; None: none), its guardrail `budget` and its billing.Budget."""
    enable_apis: bool = True
    """Whether the stack enables the Google APIs it needs (off when a platform team does that)."""
    plaintext_credentials: Literal["refuse", "allow"] | None = None
    """A credential written in plain text in the stack file: refused (settings.credentials; unset, as Pulumi.yaml's
    empty default, is `refuse`), or allowed (warned of, and stored in the state with the stack's config)."""
    job_resource: Literal["dynamic", "package"] | None = None
    """Which resource the stack's jobs are: `dynamic`, the Python dynamic resource (unset, as Pulumi.yaml's empty
    default, is `dynamic`), or `package`, the provider package's (resources/package/resource.py: its plugin must be
    found, nothing pickled into the state; a stack moves to it by an update in place)."""
    jobs: dict[str, JobSettings] = Field(default_factory=dict)
    persistent_resources: dict[str, Any] = Field(default_factory=dict)
    """Vertex AI persistent resources, as written (judged into `resources` by settings.persistent)."""
    # -- placement (settings/placement.py) --
    placement: Annotated[PlacementSettings | None, BeforeValidator(none_when_empty)] = None
    """Where and how the stack's jobs may run; each job's candidates judged into `candidates`."""
    _candidates: dict[str, Any] = PrivateAttr(default_factory=dict)

    def with_candidates(self, candidates: dict[str, Any]) -> StackSettings:
        """A copy holding each job's placement candidates as judged (settings.placement; the judge is the caller)."""
        return self._holding(_candidates=dict(candidates))

    @property
    def candidates(self) -> dict[str, Any]:
        """Job name -> its placement candidates (jobspec.review.placement.Candidate), unranked; none without
        `placement`."""
        return self._candidates
    # -- end placement --

    _root: Path = PrivateAttr(default_factory=Path.cwd)
    _secret_keys: frozenset[str] = PrivateAttr(default_factory=frozenset)
    _secret_paths: frozenset[str] = PrivateAttr(default_factory=frozenset)
    _resources: dict[str, ResourceFacts] = PrivateAttr(default_factory=dict)

    def with_resources(self, resources: dict[str, ResourceFacts]) -> StackSettings:
        """A copy holding its persistent resources as judged (settings.persistent; the judge is the one caller)."""
        return self._holding(_resources=dict(resources))

    @property
    def resources(self) -> dict[str, ResourceFacts]:
        """`gcp-training-jobs:persistentResources` as judged: name -> facts (region, labels, pools)."""
        return self._resources

    def placed(self, root: Path, secret_keys: frozenset[str],
               secret_paths: frozenset[str] = frozenset()) -> StackSettings:
        """A copy placed in its project (`root`, that trainer paths are relative to) with the keys that hold
        secrets, and where in them (`jobs.NAME.jobSpec...`, when the stack file says)."""
        return self._holding(_root=root, _secret_keys=secret_keys, _secret_paths=secret_paths)

    @property
    def root(self) -> Path:
        """The project root that trainer paths are relative to."""
        return self._root

    @property
    def secret_keys(self) -> frozenset[str]:
        """The keys (without namespace) whose value holds secrets: what is built from them stays secret."""
        return self._secret_keys

    @property
    def secret_paths(self) -> frozenset[str]:
        """Where the encrypted values are, as `key.sub.path` (`jobs.hub.jobSpec.workerPoolSpecs[0]...`): a job's
        are made secret where they stand (stack.py)."""
        return self._secret_paths

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """Every job's warnings, each named at its stack file key."""
        return tuple(warning for job in self.jobs.values() for warning in job.warnings)

    @property
    def has_tpu_job(self) -> bool:
        return any(_uses_tpu(job) for job in self.jobs.values())

    @property
    def grants_tpu_access(self) -> bool:
        """Whether the stack grants roles/ml.serviceAgent to the TPU service account (tpuAccess.grant)."""
        grant = self.tpu_access.grant
        if grant == "auto":
            return self.backend == "ai-platform" and self.has_tpu_job
        return grant == "true"

    @property
    def bucket_location(self) -> str:
        return (self.buckets.location or self.region).upper()

    def trainer_folders(self) -> dict[str, Path]:
        """Each distinct trainer path (as written) and its folder."""
        return {job.trainer.path: job.trainer.folder(self.root)
                for job in self.jobs.values() if job.trainer is not None}
