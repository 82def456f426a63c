"""The rules a training job must obey before anything is sent, judged against the catalog.

Each rule is a small function that yields Problems; `check_job` runs them all so a spec's every problem
is reported at once. One module per concern: identity (ids, labels, URIs), cluster (tier, region, machine
types, code), hardware (accelerators, zones, TPUs); `tasks` holds what they share.
"""

from __future__ import annotations

from components.jobspec.models import Job
from components.jobspec.problems import Problem
from components.jobspec.rules.cluster import (
    rule_cluster_shape,
    rule_code,
    rule_machine_types,
    rule_region,
    rule_scale_tier,
)
from components.jobspec.rules.hardware import rule_accelerators, rule_gpu_regions, rule_tpu
from components.jobspec.rules.identity import rule_job_id, rule_labels, rule_uris_and_names
from components.jobspec.rules.tasks import TI, Options, Rule, Task, gpus_used, scale_tier, tasks, uses_tpu

__all__ = ["RULES", "TI", "Options", "Rule", "Task", "check_job", "gpus_used", "rule_labels", "scale_tier",
           "tasks", "uses_tpu"]

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
)


def check_job(job: Job, opts: Options | None = None) -> list[Problem]:
    """Every problem of a parsed job, in a stable order, without duplicates."""
    opts = opts or Options()
    problems: list[Problem] = []
    for rule in RULES:
        problems.extend(rule(job, opts))
    return list(dict.fromkeys(problems))
