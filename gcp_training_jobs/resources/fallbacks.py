"""`jobs.NAME.fallbacks`: the places a job may run instead, in order. Pure (no Pulumi): the settings, the provider's
check and its create build each alternative's job data here, then read it through the one entry point (load.judge,
by way of job_model.inputs.judge_wire or the settings) like the main job; nothing else reads an alternative.

An alternative sets any of:
- `region`: where the job runs instead (trainingInput.region; a jobSpec's or tuningJob's region);
- `machineSpec` {machineType, acceleratorType, acceleratorCount}: the machine of the pools that hold accelerators
  (of every pool when none does; a trainingInput's roles: {role}Type and {role}Config.acceleratorConfig, scaleTier
  CUSTOM only);
- `scheduling.strategy` (a jobSpec, or a tuningJob's trialJobSpec: STANDARD, SPOT, FLEX_START).
Placement 0 is the job as written; placement i is `fallbacks[i-1]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.placement import placed
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.pools import machine_text

#: What an alternative may set (the settings model says the same, with types).
KEYS = ("region", "machineSpec", "scheduling")


def alternative_job(job: Mapping[str, Any], alternative: Mapping[str, Any], *,
                    region_key: str = "region") -> tuple[dict[str, Any], list[Problem]]:
    """The job data of one alternative: `job` (a mapping with trainingInput, or with jobSpec and its region) with the
    alternative's region, machine and strategy put in (jobspec.io.placement.placed, in the job's vocabulary); and
    what cannot be put in (paths within the alternative). `region_key`: where a jobSpec's region goes."""
    problems = [Problem(key, f"unknown key; allowed: {', '.join(KEYS)}") for key in alternative if key not in KEYS]
    machine, scheduling = alternative.get("machineSpec"), alternative.get("scheduling")
    out, refused = placed(job, region=alternative.get("region") or None,
                          machine=machine if isinstance(machine, Mapping) else None,
                          strategy=scheduling.get("strategy") if isinstance(scheduling, Mapping) else None,
                          region_key=region_key)
    return out, problems + refused


def placement_of(index: int, facts: JobFacts) -> dict[str, Any]:
    """The `placement` output, where the deploy made the job: which placement runs (its index: 0 the job as written,
    i `fallbacks[i-1]`; under `placement: cheapest`, i the candidate `fallbacks[i]`), its region, its scheduling
    strategy (STANDARD when none is set; None for an ml v1 job, which has none), the reservation it takes its
    machines from (None: its own machines, or any reservation) and its machine (its first pool holding accelerators,
    else its first pool), from the job's facts as the API holds it (translate.facts.facts_of_body, read by the
    caller)."""
    found = facts.running
    chosen = next((p for p in found if p.accelerators), found[0] if found else None)
    machine = None
    if chosen is not None and chosen.machine_type:
        kind, count, _ = chosen.held
        machine = machine_text(chosen.machine_type, kind if count else None, count)  # as it holds them
    return {"index": index, "region": facts.region, "strategy": None if facts.ml_v1 else facts.strategy or "STANDARD",
            "reservation": facts.runs_on.reservation_name, "machine": machine}
