"""A job's facts, read once: the one value every later stage takes (cost, quotas, guardrails, the plan, the diff,
status, spend, the provider, the fallbacks, the policy pack).

`JobFacts` holds what those stages ask of a job: its backend and kind, region, scheduling strategy, timeout,
parallel runs and trials, labels, its pools in the one form (translate.pools.Pool), the accelerators it holds at
once (per type, times its parallel runs, and per region) and where it runs (its own machines, a persistent
resource, a reservation). It is built twice and nowhere else:
- `facts_of`, by the one pass (load.judge's finish: `Judged.facts`), from the job's pools as judged, its region and
  labels, and the body its backend sends (strategy, timeout, trials);
- `facts_of_body`, from a body as the API holds a job (status, spend, the provider's outputs, a fallback's run):
  its CustomJobSpec or trainingInput parsed by its vocabulary's model and read into pools by the same
  translation (`spec_pools`, `ml_pools`). A body whose pools do not read is still a value: its pools are empty and
  `unread` says why, once, for every reader.

Where the fields are (the APIs' own): Vertex AI's `scheduling.strategy` / `scheduling.timeout` and
`persistentResourceId` of a CustomJobSpec (a HyperparameterTuningJob's `trialJobSpec`: each trial's), with
`parallelTrialCount` / `maxTrialCount` beside it; ml v1's `trainingInput.region`, `scheduling.maxRunningTime` and
`hyperparameters.maxParallelTrials` / `maxTrials`; a pool's `machineSpec.reservationAffinity`. Durations are
protobuf Durations ("7200s"); int64 counts travel as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import (
    AI_PLATFORM,
    JOB_SPEC,
    TRAINING,
    TRAINING_INPUT,
    TUNING,
    VERTEX,
    is_duration,
)
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL
from gcp_training_jobs.jobspec.translate.pools import VERTEX_SPEC_KEYS, Pool, machine_text, ml_pools, spec_pools
from gcp_training_jobs.jobspec.vocab.jobs import VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import parse_job

#: Where a job runs: on machines of its own, on a persistent resource, or on a Compute Engine reservation.
OWN_MACHINES, PERSISTENT_RESOURCE, RESERVATION = "own machines", "persistent resource", "reservation"


def as_int(value: Any, default: int = 0) -> int:
    """int64 values travel as text ("9") and Pulumi turns 8 into 8.0."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


#: Where a trainingInput says how long it may run (on either backend: the field the user wrote).
MAX_RUNNING_TIME: Final = f"{TRAINING_INPUT}.scheduling.maxRunningTime"


@dataclass(frozen=True)
class Timeout:
    """The longest a job may run: the body's timeout, or the API's default when it sets none."""

    seconds: float
    field: str | None
    """The field that sets it (`jobSpec.scheduling.timeout`; a trainingInput's maxRunningTime, whichever body it is
    sent as), None for the default."""
    default_of: str = ""
    """Whose default applies when the body sets none ("Vertex AI", "AI Platform Training")."""
    per_trial: bool = False
    """A Vertex tuning job's timeout holds for each trial (trialJobSpec), not for the whole job."""

    @property
    def hours(self) -> float:
        return self.seconds / 3600

    @property
    def set(self) -> bool:
        """Whether the job sets it (rather than running to the API's default)."""
        return self.field is not None

    def text(self) -> str:
        """`jobSpec.scheduling.timeout 7200s`, or `no timeout set: Vertex AI's default, 7 days`."""
        if self.field is not None:
            return f"{self.field} {self.seconds:g}s" + (", per trial" if self.per_trial else "")
        days = f"{self.seconds / 86400:g} days"
        return f"no timeout set: {self.default_of}'s default, {days}" + (", per trial" if self.per_trial else "")


@dataclass(frozen=True)
class RunsOn:
    """Where a job runs: OWN_MACHINES, PERSISTENT_RESOURCE (`persistentResourceId`) or RESERVATION (a pool's
    `reservationAffinity`: its type, and the reservation named when it names one)."""

    kind: str = OWN_MACHINES
    persistent_resource_id: str | None = None
    reservation_type: str | None = None
    reservation_name: str | None = None


@dataclass(frozen=True)
class JobFacts:
    """One job's facts, read once (see the module): every later stage takes this value, none reads a body for them."""

    backend: str
    kind: str
    region: str | None
    strategy: str | None
    """Vertex AI's scheduling.strategy (None: STANDARD, on demand; always None on ml v1)."""
    timeout: Timeout
    parallel_runs: int
    """Copies of the cluster at once: a tuning job's parallel trials, else 1."""
    trials: int
    """Copies of the cluster in all: a tuning job's trials (never fewer than run at once), else 1."""
    labels: Mapping[str, str] = field(default_factory=dict)
    pools: tuple[Pool, ...] = ()
    """Every pool, placeholders included (load.Judged.pools)."""
    runs_on: RunsOn = RunsOn()
    spec_key: str | None = None
    """Where a Vertex AI body holds its CustomJobSpec (jobSpec, trialJobSpec); None for ml v1."""
    unread: Problem | None = None
    """Why a body's pools could not be read (facts_of_body); None when they were."""

    @property
    def ml_v1(self) -> bool:
        """An ml v1 job (AI Platform Training)."""
        return self.backend == AI_PLATFORM

    @property
    def running(self) -> tuple[Pool, ...]:
        """The pools that hold machines (placeholders and pools without a machine left out)."""
        return tuple(p for p in self.pools if p.runs)

    @property
    def on_persistent_resource(self) -> str | None:
        """The persistent resource the job runs on (`persistentResourceId`), else None. Its machines are the
        resource's, billed and counted against quotas and the stack's guardrails there: the job holds none of its
        own (cost, quotas and the stack's sums take `own`)."""
        return self.runs_on.persistent_resource_id if self.runs_on.kind == PERSISTENT_RESOURCE else None

    @property
    def own(self) -> tuple[Pool, ...]:
        """The running pools on machines of the job's own: none on a persistent resource (`running` otherwise)."""
        return () if self.on_persistent_resource else self.running

    @property
    def own_accelerators(self) -> int:
        """Accelerators the job holds of its own at once: none on a persistent resource, else `accelerators`."""
        return 0 if self.on_persistent_resource else self.accelerators

    @property
    def accelerator_totals(self) -> dict[str, int]:
        """Accelerator type -> how many the job holds at once (all pools, replicas and parallel runs): the one sum."""
        totals: dict[str, int] = {}
        for pool in self.running:
            if pool.accelerators:
                kind = str(pool.held.kind)
                totals[kind] = totals.get(kind, 0) + pool.accelerators
        return {kind: n * self.parallel_runs for kind, n in sorted(totals.items())}

    @property
    def accelerators(self) -> int:
        """Accelerators the job holds at once, of every type."""
        return sum(self.accelerator_totals.values())

    @property
    def accelerators_by_region(self) -> dict[str, dict[str, int]]:
        """Region -> accelerator type -> how many the job holds there at once (nothing while its region is unknown)."""
        totals = self.accelerator_totals
        return {self.region: totals} if self.region and totals else {}

    def pool_path(self, pool: Pool) -> str:
        """Where a pool is in the job's body: `jobSpec.workerPoolSpecs[1]` (a tuning job's under trialJobSpec), or
        where an ml v1 job wrote it (`trainingInput.workerType`)."""
        return f"{self.spec_key}.workerPoolSpecs[{pool.index}]" if self.spec_key else pool.where

    def pool_text(self, pool: Pool) -> str:
        """A running pool as the job holds it, in the one wording (translate.pools.machine_text): its machine, its
        replicas and the accelerators each holds, `a2-ultragpu-8g x3 + 8 NVIDIA_A100_80GB`."""
        kind, count, _ = pool.held
        return machine_text(pool.machine_type, kind if count else None, count, replicas=pool.replica_count)

    def machines_text(self) -> str:
        """What the job holds at once, in the one wording: its running pools' pool_text, `; ` between them, and a
        tuning job's trials at once: `4 trials at once, each g2-standard-12 x1 + 1 NVIDIA_L4`."""
        pools = "; ".join(self.pool_text(pool) for pool in self.running) or "no machines read"
        return pools if self.parallel_runs == 1 else f"{self.parallel_runs} trials at once, each {pools}"


# --- Reading a body --------------------------------------------------------------------------------------


def _spec_key(body: Mapping[str, Any]) -> str | None:
    return next((key for key in VERTEX_SPEC_KEYS if isinstance(body.get(key), Mapping)), None)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _runs(body: Mapping[str, Any], spec_key: str | None) -> tuple[int, int]:
    """(parallel runs, trials): Vertex parallelTrialCount / maxTrialCount beside a trialJobSpec, ml v1
    hyperparameters.maxParallelTrials / maxTrials (unset: 1); never fewer trials than run at once."""
    if spec_key == TRIAL:
        parallel, total = body.get("parallelTrialCount"), body.get("maxTrialCount")
    elif spec_key is None and (hp := _mapping(_mapping(body.get(TRAINING_INPUT)).get("hyperparameters"))):
        parallel, total = hp.get("maxParallelTrials"), hp.get("maxTrials")
    else:
        return 1, 1
    runs = max(1, as_int(parallel, 1))
    return runs, max(as_int(total, 1), runs)


def _timeout(body: Mapping[str, Any], spec_key: str | None, backend: str) -> Timeout:
    """The longest the job may run: Vertex AI's `scheduling.timeout` of its spec (a tuning job's: each trial's), ml
    v1's `trainingInput.scheduling.maxRunningTime` (the whole job's); else the API's documented default."""
    per_trial = spec_key == TRIAL
    if spec_key is not None:
        scheduling = _mapping(_mapping(body.get(spec_key)).get("scheduling"))
        value, at = scheduling.get("timeout"), f"{spec_key}.scheduling.timeout"
    else:
        scheduling = _mapping(_mapping(body.get(TRAINING_INPUT)).get("scheduling"))
        value, at = scheduling.get("maxRunningTime"), MAX_RUNNING_TIME
    if isinstance(value, str) and is_duration(value) and float(value[:-1]) > 0:
        return Timeout(float(value[:-1]), at, per_trial=per_trial)
    # unset (a malformed or zero value is refused by the rules before a body is made)
    if backend == VERTEX:
        return Timeout(catalog.DEFAULT_TIMEOUT_SECONDS, None, "Vertex AI", per_trial)
    return Timeout(catalog.DEFAULT_MAX_RUNNING_SECONDS, None, "AI Platform Training")


def _runs_on(body: Mapping[str, Any], spec_key: str | None, pools: Sequence[Pool]) -> RunsOn:
    spec = _mapping(body.get(spec_key)) if spec_key else {}
    resource = spec.get("persistentResourceId")
    if isinstance(resource, str) and resource:
        return RunsOn(PERSISTENT_RESOURCE, persistent_resource_id=resource)
    for pool in pools:
        affinity = pool.reservation
        if affinity is not None and affinity.reservation_affinity_type not in (None, "NO_RESERVATION"):
            name = affinity.values[0] if affinity.values else None
            return RunsOn(RESERVATION, reservation_type=affinity.reservation_affinity_type, reservation_name=name)
    return RunsOn()


def facts_of(body: Mapping[str, Any] | None, pools: Sequence[Pool], *, backend: str, kind: str,
             region: str | None, labels: Mapping[str, str] | None, unread: Problem | None = None) -> JobFacts:
    """A job's facts from its pools (as judged), region and labels, and the body its backend sends (its strategy,
    timeout and trials; None, for a job whose problems left it without one: the API's defaults)."""
    body = body or {}
    spec_key = _spec_key(body) if backend == VERTEX else None
    if spec_key is None and backend == VERTEX:
        spec_key = TRIAL if kind == TUNING else JOB_SPEC  # no body yet: where it will be
        body = {}
    runs, trials = _runs(body, spec_key)
    strategy = _mapping(_mapping(body.get(spec_key)).get("scheduling")).get("strategy") if spec_key else None
    return JobFacts(backend, kind, region or None, strategy if isinstance(strategy, str) else None,
                    _timeout(body, spec_key, backend), runs, trials, dict(labels or {}), tuple(pools),
                    _runs_on(body, spec_key, pools), spec_key, unread)


def facts_of_body(body: Mapping[str, Any], *, region: str | None = None) -> JobFacts:
    """The facts of a body as the API holds a job (or as a backend sends it): a Vertex AI body's CustomJobSpec (a
    CustomJob's jobSpec, a tuning job's trialJobSpec) parsed by its model and read as written; an ml v1 body's
    trainingInput parsed and read as AI Platform runs it. `region`: where the job runs (Vertex AI puts it in the
    job's name, not its body; an ml v1 body's own trainingInput.region when not given). A body whose pools do not
    parse has none, and `unread` says why."""
    spec_key = _spec_key(body)
    ti = _mapping(body.get(TRAINING_INPUT))
    pools: list[Pool] = []
    unread: Problem | None = None
    try:
        if spec_key is not None:
            from gcp_training_jobs.jobspec.vocab.custom_job import (
                parse_custom_job_spec,  # Vertex's models, for its bodies
            )

            parsed, single = parse_custom_job_spec(dict(body[spec_key]))
            pools = spec_pools(VertexJob(parsed, single_pool=single))
        elif ti:
            pools = ml_pools(parse_job({TRAINING_INPUT: dict(ti)}).training_input)
    except SpecError as error:
        unread = error.problems[0] if error.problems else Problem("", "does not parse")
    backend = VERTEX if spec_key is not None else AI_PLATFORM
    own_region = ti.get("region") if isinstance(ti.get("region"), str) else None
    return facts_of(body, pools, backend=backend, kind=TUNING if spec_key == TRIAL else TRAINING,
                    region=region or own_region, labels=_mapping(body.get("labels")), unread=unread)
