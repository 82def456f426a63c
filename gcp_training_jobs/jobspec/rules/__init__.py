"""Stage 6, rules: what a training job must obey before anything is sent, judged against the catalog.

Each rule is a small function that yields Problems; `check_job`, `check_custom_job` and `check_tuning_job` run
them all, so a job's every problem is reported at once. One module per concern: `tasks` (what the rules share),
`identity` (ids, labels, URIs), `regions` (the one region rule, every place a region is written asks it),
`cluster` (tier, region, machine types, code), `hardware` (AI Platform's
accelerators, zones, TPUs), `tuning` (an ml v1 job's hyperparameters), and the Vertex AI modules below.

Vertex AI is judged on worker pools in one form (`pools`), whichever vocabulary the job is written in: a
CustomJobSpec's pools as written, a trainingInput's as translated. Pool rules: vertex_hardware (machine
types, accelerators, end of support, regions), vertex_pools (primary pool, replicas, code, TPU VMs,
reservations, disks, what SPOT and FLEX_START need), containers (prebuilt images and their end of
availability); vertex_spec holds the rules on a CustomJobSpec's own fields, and vertex_tuning those on a
tuning config (a HyperparameterTuningJob), whose trials' CustomJobSpec is judged as any other. On backend
vertex a trainingInput keeps the rules on its shape (ids, labels, tier, roles, code) and trades AI Platform's
hardware limits for Vertex AI's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from gcp_training_jobs.jobspec.core.problems import Problem, collapse_repeated
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL
from gcp_training_jobs.jobspec.rules.cluster import (
    rule_cluster_shape,
    rule_code,
    rule_machine_types,
    rule_region,
    rule_scale_tier,
)
from gcp_training_jobs.jobspec.rules.containers import rule_prebuilt_images
from gcp_training_jobs.jobspec.rules.hardware import rule_accelerators, rule_gpu_regions, rule_tpu
from gcp_training_jobs.jobspec.rules.identity import credential_warnings, rule_job_id, rule_labels, rule_uris_and_names
from gcp_training_jobs.jobspec.rules.regions import region_choices, region_problem, training_regions
from gcp_training_jobs.jobspec.rules.tasks import TI, Options, Rule, Task, gpus_used, scale_tier, tasks, today, uses_tpu
from gcp_training_jobs.jobspec.rules.tuning import rule_hyperparameters
from gcp_training_jobs.jobspec.rules.vertex_hardware import Setting, rule_machines
from gcp_training_jobs.jobspec.rules.vertex_hardware import rule_region as rule_vertex_region
from gcp_training_jobs.jobspec.rules.vertex_pools import (
    rule_disks,
    rule_pool_structure,
    rule_reservations,
    rule_strategy_pools,
    rule_tpus,
)
from gcp_training_jobs.jobspec.rules.vertex_spec import rule_pool_code, rule_scheduling, rule_spec_names
from gcp_training_jobs.jobspec.translate.pools import Pool
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job

__all__ = ["POOL_RULES", "RULES", "SPEC_RULES", "TI", "Options", "Pool", "Rule", "Setting", "Task",
           "check_custom_job", "check_job", "check_tuning_job", "gpus_used", "judge_pools", "judge_translation",
           "region_choices", "region_problem", "rule_labels", "training_regions",
           "scale_tier", "tasks", "today", "uses_tpu", "credential_warnings"]

RULES: tuple[Rule, ...] = (
    rule_job_id,
    rule_labels,
    rule_scale_tier,
    rule_region,
    rule_cluster_shape,
    rule_machine_types,
    rule_accelerators,
    rule_gpu_regions,
    rule_tpu,
    rule_uris_and_names,
    rule_code,
    rule_hyperparameters,
)


#: AI Platform Training's hardware limits (its GPU guide's table, zones, TPU regions and runtimes): on backend
#: vertex a trainingInput is judged by POOL_RULES instead, on its translation.
AI_PLATFORM_ONLY: frozenset[Rule] = frozenset({rule_accelerators, rule_gpu_regions, rule_tpu})

PoolRule = Callable[[Sequence[Pool], Setting], Iterator[Problem]]
SpecRule = Callable[[VertexJob, Options], Iterator[Problem]]

#: Rules on Vertex AI worker pools, for both vocabularies.
POOL_RULES: tuple[PoolRule, ...] = (
    rule_pool_structure,
    rule_machines,
    rule_vertex_region,
    rule_tpus,
    rule_reservations,
    rule_disks,
    rule_strategy_pools,
    rule_prebuilt_images,
)
#: Rules on a CustomJobSpec's own fields.
SPEC_RULES: tuple[SpecRule, ...] = (rule_scheduling, rule_spec_names, rule_pool_code)


def check_job(job: Job, opts: Options, pools: Sequence[Pool], untranslated: Sequence[Problem] = ()) -> list[Problem]:
    """Every problem of a parsed job, in a stable order, without duplicates (on backend vertex, with Vertex
    AI's limits on the job's translation instead of AI Platform's). On vertex `pools` is the job's translation
    (translate.training_input.training_input_pools) and `untranslated` what did not translate (load translates it
    once); AI Platform's limits judge the model itself."""
    problems: list[Problem] = []
    for rule in RULES:
        if not (opts.vertex and rule in AI_PLATFORM_ONLY):
            problems.extend(rule(job, opts))
    if opts.vertex:
        problems.extend(judge_translation(job, pools, untranslated, opts))
    return collapse_repeated(problems)


def judge_pools(pools: Sequence[Pool], setting: Setting, rules: Sequence[PoolRule] = POOL_RULES) -> list[Problem]:
    """POOL_RULES on a job's pools."""
    return [problem for rule in rules for problem in rule(pools, setting)]


#: A translation's pools have the right structure by construction (pool 0 the master with one replica, then
#: the roles that have replicas): its structure is not judged again, so a role that did not translate (a
#: problem already) is not reported a second time as a missing pool.
TRANSLATION_RULES: tuple[PoolRule, ...] = tuple(rule for rule in POOL_RULES if rule is not rule_pool_structure)


def judge_translation(job: Job, pools: Sequence[Pool], untranslated: Sequence[Problem],
                      opts: Options | None = None) -> list[Problem]:
    """Every problem Vertex AI has with a trainingInput's translation: what did not translate, then POOL_RULES
    on the pools it translated to."""
    ti = job.training_input
    problems = list(untranslated)
    problems.extend(judge_pools(pools, Setting(ti.region, f"{TI}.region", today(opts)), TRANSLATION_RULES))
    return list(dict.fromkeys(problems))


def check_custom_job(job: VertexJob, opts: Options, *, region_at: str = "region",
                     pools: Sequence[Pool]) -> list[Problem]:
    """Every problem of a CustomJobSpec (and its region and labels), in a stable order, without duplicates.
    `pools`: its pools as read once (translate.pools.spec_pools)."""
    problems: list[Problem] = list(rule_labels(cast(Any, job), opts))
    for spec_rule in SPEC_RULES:
        problems.extend(spec_rule(job, opts))
    sched = job.spec.scheduling
    setting = Setting(job.region, region_at, today(opts), strategy=sched.strategy if sched else None,
                      persistent_resource=job.spec.persistent_resource_id is not None)
    problems.extend(judge_pools(pools, setting))
    return collapse_repeated(problems)


def check_tuning_job(job: TuningJob, opts: Options, *, region_at: str = "region",
                     pools: Sequence[Pool]) -> list[Problem]:
    """Every problem of a tuning config (and its region and labels): the study, the trial counts, and the trials'
    CustomJobSpec by the CustomJobSpec rules (its problems named under trialJobSpec), without duplicates."""
    from gcp_training_jobs.jobspec.rules.vertex_tuning import TUNING_RULES  # only a tuning config imports its models

    problems: list[Problem] = list(rule_labels(cast(Any, job), opts))
    for rule in TUNING_RULES:
        problems.extend(rule(job, opts))
    if job.config.trial_job_spec is None:
        problems.append(Problem(TRIAL, "required; allowed: a CustomJobSpec (workerPoolSpecs, ...), the job each "
                                "trial runs"))
    else:
        problems += [p if p.path == region_at else p.within(TRIAL)
                     for p in check_custom_job(job.trial, opts, region_at=region_at, pools=pools)]
    return collapse_repeated(problems)
