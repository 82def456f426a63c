"""Whether a job as the API holds it is the job a body declares: the one comparison every adoption by labels makes.

A job carrying a resource's identity labels is that resource's only if its body agrees with what the stack renders
for it, on the fields that make the job (every field of the body but the ones naming it: its labels, its id or
display name): a job made outside Pulumi with a stack job's labels and another image, machine, region or scheduling
is not the stack's. The comparison is one rule for every backend and kind of job (a trainingInput, a CustomJob's
jobSpec, a tuning job's studySpec and trialJobSpec): each value the body sets must be the job's, and the fields that
decide what runs and where (BOTH_WAYS: an image, a command, args, env, machines and accelerators, Spot scheduling, a
reservation, a service account) must not be set on the job where the body leaves them out; what else the API adds
(defaults, times, states, its own fields) is not compared, and a value the API leaves out because it is proto3's
default (0, false, "", an empty list or mapping) agrees with that default. The API's spellings of a value are one
value: an int64 answered as text ("2"), a number as 2 or 2.0.
"""

from __future__ import annotations

import re
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.credentials import masked_text

#: The body's fields that name a job rather than make it: its labels (the identity's, checked apart), its id (ml v1)
#: or display name (Vertex AI: the id), and the name the API gives it.
NAMING: Final = frozenset({"labels", "jobId", "displayName", "name"})
#: The most differences a verdict names (the rest are counted).
SHOWN: Final = 4
#: Where a value is not shown, whatever it looks like: an environment variable's value (often a credential).
HIDDEN_UNDER: Final = ("env",)
#: The fields that decide what runs and where, compared where the job holds them and the stack leaves them out too
#: (a job that adds a GPU, a command, an env, Spot scheduling, a reservation or another service account is another
#: job); every other field the API holds and the body does not set is the API's (defaults, times, states).
BOTH_WAYS: Final = frozenset({
    "strategy", "machineType", "acceleratorType", "acceleratorCount", "replicaCount", "imageUri", "executorImageUri",
    "packageUris", "pythonModule", "command", "args", "env", "serviceAccount", "network", "reservationAffinity",
    "persistentResourceId", "masterType", "workerType", "workerCount", "parameterServerType", "parameterServerCount",
    "evaluatorType", "evaluatorCount", "type", "count", "runtimeVersion", "pythonVersion", "region", "tpuTfVersion",
    "useChiefInTfConfig", "enableWebAccess", "maxTrialCount", "parallelTrialCount"})
#: How the API spells a default the stack leaves out (Vertex AI's enums: scheduling's and an accelerator's).
DEFAULTS: Final = {"strategy": frozenset({"STANDARD", "STRATEGY_UNSPECIFIED", "ON_DEMAND"}),
                   "acceleratorType": frozenset({"ACCELERATOR_TYPE_UNSPECIFIED"}),
                   "type": frozenset({"ACCELERATOR_TYPE_UNSPECIFIED"})}
#: An integer as text: how the API answers an int64 field (replicaCount "2").
INTEGER: Final = re.compile(r"-?[0-9]+")


def differences(declared: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """The fields that make the job on which `live` (as the API holds it) differs from `declared` (the body the stack
    renders for it), each as `PATH: the stack's VALUE, the job's VALUE` (values masked where credentials, an
    environment variable's not shown); none when it is the job declared."""
    found: list[str] = []
    for key in sorted(set(declared) - NAMING):
        _compare(declared[key], live.get(key), key, found)
    return found


def verdict(found: list[str]) -> str | None:
    """The differences in one line (at most SHOWN, the rest counted), or None when there are none."""
    if not found:
        return None
    more = f"; {len(found) - SHOWN} more field(s) differ" if len(found) > SHOWN else ""
    return "its body differs from what the stack renders for it: " + "; ".join(found[:SHOWN]) + more


def _compare(mine: Any, theirs: Any, path: str, found: list[str]) -> None:
    if isinstance(mine, dict):
        if theirs is None and _empty(mine):
            return
        if not isinstance(theirs, dict):
            found.append(_said(path, mine, theirs))
            return
        for key in sorted(set(mine) | {k for k, v in theirs.items() if k in BOTH_WAYS or isinstance(v, dict)}):
            if key in mine:
                _compare(mine[key], theirs.get(key), f"{path}.{key}", found)
            elif isinstance(theirs[key], dict):  # what the stack leaves out: only what runs is compared
                _compare({}, theirs[key], f"{path}.{key}", found)
            elif not _default(key, theirs[key]):
                found.append(_said(f"{path}.{key}", None, theirs[key]))
    elif isinstance(mine, list):
        if theirs is None and not mine:
            return
        if not isinstance(theirs, list) or len(theirs) != len(mine):
            found.append(_said(path, mine, theirs))
            return
        for index, (one, other) in enumerate(zip(mine, theirs, strict=True)):
            _compare(one, other, f"{path}[{index}]", found)
    elif not _same(mine, theirs):
        found.append(_said(path, mine, theirs))


def _default(key: str, value: Any) -> bool:
    """Whether a value the stack leaves out is the one it means: proto3's default, or the API's default spelled."""
    return _empty(value) or str(value) in DEFAULTS.get(key, ())


def _empty(value: Any) -> bool:
    """proto3's default, which the API leaves out of its answer."""
    if isinstance(value, dict):
        return all(_empty(item) for item in value.values())
    return value in (None, "", 0, False) or value == []


def _same(mine: Any, theirs: Any) -> bool:
    if theirs is None:
        return _empty(mine)
    return _scalar(mine) == _scalar(theirs)


def _scalar(value: Any) -> str:
    """One spelling of a value: a bool as true/false, a number as its decimal, an integer as text (an int64 as the API
    answers it) as that integer."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str) and INTEGER.fullmatch(value):
        return str(int(value))
    return str(value)


def _said(path: str, mine: Any, theirs: Any) -> str:
    if any(f".{hidden}[" in path or path.endswith(f".{hidden}") for hidden in HIDDEN_UNDER):
        return f"{path}: differs (values not shown)"
    return f"{path}: the stack's {_shown(mine)}, the job's {_shown(theirs)}"


def _shown(value: Any) -> str:
    text = "none" if value is None else value if isinstance(value, str) else repr(value)
    text = masked_text(text)
    return text if len(text) <= 120 else text[:117] + "..."
