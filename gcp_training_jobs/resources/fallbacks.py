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

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import JOB_SPEC, TRAINING_INPUT, TUNING_JOB
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.pools import machine_text

#: What an alternative may set (the settings model says the same, with types).
KEYS = ("region", "machineSpec", "scheduling")
MACHINE_KEYS = ("machineType", "acceleratorType", "acceleratorCount")


def alternative_job(job: Mapping[str, Any], alternative: Mapping[str, Any], *,
                    region_key: str = "region") -> tuple[dict[str, Any], list[Problem]]:
    """The job data of one alternative: `job` (a mapping with trainingInput, or with jobSpec and its region) with the
    alternative's region, machine and strategy put in; and what cannot be put in (paths within the alternative).
    `region_key`: where a jobSpec's region goes (the `job` input's `region`)."""
    out = copy.deepcopy(dict(job))
    problems = [Problem(key, f"unknown key; allowed: {', '.join(KEYS)}") for key in alternative if key not in KEYS]
    machine = alternative.get("machineSpec")
    strategy = (alternative.get("scheduling") or {}).get("strategy") \
        if isinstance(alternative.get("scheduling"), Mapping) else None
    if JOB_SPEC in out or TUNING_JOB in out:  # a tuning job's trials run its trialJobSpec
        if JOB_SPEC in out:
            spec = out[JOB_SPEC] = dict(out[JOB_SPEC] or {})
        else:
            config = out[TUNING_JOB] = dict(out[TUNING_JOB] or {})
            spec = config["trialJobSpec"] = dict(config.get("trialJobSpec") or {})
        held = spec.get("persistentResourceId")
        if held:  # the job's machines are the resource's: nothing to fall back from
            where = f"{JOB_SPEC if JOB_SPEC in out else f'{TUNING_JOB}.trialJobSpec'}.persistentResourceId"
            problems.append(Problem("", f"the job runs on persistent resource {held} ({where}), whose machines "
                                    "are there while it exists: no stockout or quota refusal to fall back from; "
                                    "allowed: no fallbacks on a job on a persistent resource"))
            return out, problems
        if alternative.get("region"):
            out[region_key] = alternative["region"]
        if isinstance(machine, Mapping):
            spec["workerPoolSpecs"] = _spec_pools(spec.get("workerPoolSpecs"), machine)
        if strategy is not None:
            spec["scheduling"] = {**(spec.get("scheduling") or {}), "strategy": strategy}
        return out, problems
    ti = out[TRAINING_INPUT] = dict(out.get(TRAINING_INPUT) or {})
    if alternative.get("region"):
        ti["region"] = alternative["region"]
    if isinstance(machine, Mapping):
        if (ti.get("scaleTier") or "BASIC") != "CUSTOM":
            problems.append(Problem("machineSpec", f"sets the machines of a trainingInput with scaleTier "
                                    f"{ti.get('scaleTier') or 'BASIC'}; allowed: scaleTier CUSTOM (its roles' "
                                    "machine types), or no machineSpec"))
        else:
            _roles(ti, machine)
    if strategy is not None:
        problems.append(Problem("scheduling.strategy", "a trainingInput has no scheduling strategy; allowed: a "
                                "jobSpec job (scheduling.strategy SPOT, FLEX_START), or no strategy"))
    return out, problems


def _gpu_pools(listed: Sequence[Any]) -> list[int]:
    with_gpus = [i for i, p in enumerate(listed) if isinstance(p, Mapping)
                 and isinstance(p.get("machineSpec"), Mapping) and p["machineSpec"].get("acceleratorType")]
    return with_gpus or [i for i, p in enumerate(listed) if isinstance(p, Mapping) and p.get("machineSpec")]


def _spec_pools(given: Any, machine: Mapping[str, Any]) -> Any:
    single = isinstance(given, Mapping)
    listed = [dict(given)] if single else [dict(p) if isinstance(p, Mapping) else p for p in given or []]
    for i in _gpu_pools(listed):
        listed[i]["machineSpec"] = {**listed[i]["machineSpec"], **{k: machine[k] for k in MACHINE_KEYS if k in machine}}
    return listed[0] if single else listed


def _roles(ti: dict[str, Any], machine: Mapping[str, Any]) -> None:
    present = [r for r in catalog.ROLES if ti.get(f"{r}Type")]
    with_gpus = [r for r in present if ((ti.get(f"{r}Config") or {}).get("acceleratorConfig") or {}).get("type")]
    for role in with_gpus or present:
        if "machineType" in machine:
            ti[f"{role}Type"] = machine["machineType"]
        given = {k: machine[k] for k in MACHINE_KEYS[1:] if k in machine}  # its accelerators
        if given:
            config = dict(ti.get(f"{role}Config") or {})
            accelerator = dict(config.get("acceleratorConfig") or {})
            if "acceleratorType" in given:
                accelerator["type"] = given["acceleratorType"]
            if "acceleratorCount" in given:
                accelerator["count"] = str(given["acceleratorCount"])  # int64: as text on the wire
            config["acceleratorConfig"] = accelerator
            ti[f"{role}Config"] = config


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
