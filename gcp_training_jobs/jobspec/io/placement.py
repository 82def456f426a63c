"""A job's data put at another placement, in the vocabulary it is written in: its region, its machine and its
`scheduling.strategy`, the one edit of a job's data every placement makes (a fallback, a `placement: cheapest`
candidate), before the one pass judges the result. What a vocabulary cannot take is a Problem, at a path within
the placement."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import JOB_SPEC, TRAINING_INPUT, TUNING_JOB
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL

#: What a placement may set of a job's machine.
MACHINE_KEYS: Final = ("machineType", "acceleratorType", "acceleratorCount")


def placed(job: Mapping[str, Any], *, region: str | None = None, machine: Mapping[str, Any] | None = None,
           strategy: str | None = None, region_key: str = "region") -> tuple[dict[str, Any], list[Problem]]:
    """`job` (a mapping with trainingInput, or with jobSpec or tuningJob and its region) with `region`, `machine`
    (MACHINE_KEYS) and `strategy` put in, and what cannot be put in. `region_key`: where a jobSpec's region goes."""
    out = copy.deepcopy(dict(job))
    problems: list[Problem] = []
    if JOB_SPEC in out or TUNING_JOB in out:  # a tuning job's trials run its trialJobSpec
        if JOB_SPEC in out:
            spec = out[JOB_SPEC] = dict(out[JOB_SPEC] or {})
        else:
            config = out[TUNING_JOB] = dict(out[TUNING_JOB] or {})
            spec = config[TRIAL] = dict(config.get(TRIAL) or {})
        on = spec.get("persistentResourceId")
        if on:  # the job's machines are the resource's: nothing to fall back from
            where = f"{JOB_SPEC if JOB_SPEC in out else f'{TUNING_JOB}.{TRIAL}'}.persistentResourceId"
            problems.append(Problem("", f"the job runs on persistent resource {on} ({where}), whose machines "
                                    "are there while it exists: no stockout or quota refusal to fall back from; "
                                    "allowed: no fallbacks on a job on a persistent resource"))
            return out, problems
        if region:
            out[region_key] = region
        if machine is not None:
            spec["workerPoolSpecs"] = _spec_pools(spec.get("workerPoolSpecs"), machine)
        if strategy is not None:
            spec["scheduling"] = {**(spec.get("scheduling") or {}), "strategy": strategy}
        return out, problems
    ti = out[TRAINING_INPUT] = dict(out.get(TRAINING_INPUT) or {})
    if region:
        ti["region"] = region
    if machine is not None:
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
