"""What each TrainingJob input may be, judged in one place for both places it is given: `TrainingJob(...)` in the
program (each value known there, an Output left to the provider) and the provider's `check` (the engine's values;
UNKNOWN at preview). Only an unknown value passes unchecked: any other text where a number or a flag belongs
(`retries="three"`) is a problem naming the input and what it allows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pulumi.runtime.rpc import UNKNOWN

from components.jobspec.core.names import BACKENDS
from components.resources.training_job.runs import retries_problem

#: The flags (true / false) among the inputs.
FLAGS = ("waitForCompletion", "protect", "deleteRecordOnDelete")


def unknown(value: Any) -> bool:
    """Whether a value is the engine's unknown (a preview's Output not resolved yet)."""
    return isinstance(value, str) and value == UNKNOWN


def seconds_problem(value: Any) -> str | None:
    """Why a waitTimeoutSeconds value is not a number of seconds (None: it is, or it is not set)."""
    if value is None or unknown(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of seconds; allowed: a finite number of seconds > 0, e.g. 3600"
    if not math.isfinite(value) or value <= 0:
        return f"{value!r}; allowed: a finite number of seconds > 0, e.g. 3600"
    return None


def input_problems(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(input, what is wrong and what is allowed) for each input of `props` (the engine's camelCase names) that is
    known and not allowed; unset and unknown values pass."""
    found: list[tuple[str, str]] = []

    def given(key: str) -> bool:
        return props.get(key) is not None and not unknown(props.get(key))

    backend = props.get("backend")
    if given("backend") and backend not in BACKENDS:
        found.append(("backend", f"{backend!r}; allowed: {', '.join(BACKENDS)}"))
    for key, what in (("project", "the Google Cloud project id"), ("rerun", "any text (change it to run the job "
                                                                           "again)")):
        if given(key) and not isinstance(props[key], str):
            found.append((key, f"{props[key]!r}; allowed: {what}"))
    if given("job") and not isinstance(props["job"], Mapping):
        found.append(("job", f"{type(props['job']).__name__}; allowed: a mapping, {{'trainingInput': ...}} or "
                             "{'jobSpec': ..., 'region': ...}"))
    if (problem := seconds_problem(props.get("waitTimeoutSeconds"))) is not None:
        found.append(("waitTimeoutSeconds", problem))
    for key in FLAGS:
        if given(key) and not isinstance(props[key], bool):
            found.append((key, f"{props[key]!r}; allowed: true, false"))
    retries = props.get("retries")
    if given("retries") and (problem := retries_problem(retries)) is not None:
        found.append(("retries", problem))
    if given("fallbacks") and not isinstance(props["fallbacks"], list):
        found.append(("fallbacks", f"{props['fallbacks']!r}; allowed: a list of alternatives (region, machineSpec, "
                                   "scheduling)"))
    if given("guardrails") and not isinstance(props["guardrails"], Mapping):
        found.append(("guardrails", f"{props['guardrails']!r}; allowed: a mapping of the stack's guardrails"))
    return found
