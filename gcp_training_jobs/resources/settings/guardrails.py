"""`gcp-training-jobs:guardrails`, the stack's own rules on its jobs: the settings model and its judging.

The rules themselves are pure (gcp_training_jobs.jobspec.review.guardrails); this module validates what a stack file or
`pulumi.Config` declares (known accelerator names, label keys) and hands the rules a judged stack's jobs as the
facts they were judged with (`stack_facts`), the names of those with fallbacks (`falling_back`: priced at their
worst placement, off any reservation), and its `placement: cheapest` jobs priced where they may run
(settings.placements.placed: at the candidate each would take, and at its dearest). `guardrail_problems_of(settings)`
is what `plan` holds a stack to; the policy pack and the provider call the same rules, with the same fallbacks, so
the three agree. `one_round(error, file)` holds
the jobs of a stack file that did judge to them while another job has a mistake, so `validate` and `plan` say both in
one round.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from pydantic import field_validator, model_validator

from gcp_training_jobs.jobspec.catalog import accelerators, vertex_machines, vertex_regions
from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.core.errors import SpecError, UnreadableError
from gcp_training_jobs.jobspec.core.names import LABEL_KEY
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, suggestion
from gcp_training_jobs.jobspec.review.guardrails import Guardrails, all_guardrail_problems, stack_budget_problems
from gcp_training_jobs.jobspec.rules.tasks import in_support
from gcp_training_jobs.jobspec.rules.tasks import today as today_of_rules
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.settings.placements import placed

#: Every accelerator name the catalog knows: the acceleratorType values of its tables, and the TPU VM
#: machine types whose chips have no acceleratorType value (TPU v6e, TPU7x), by machine type.
KNOWN_ACCELERATORS: tuple[str, ...] = tuple(sorted(
    set(accelerators.ACCELERATOR_TYPES)
    | set(vertex_regions.ACCELERATOR_LABELS.values())
    | {m.accelerator for m in vertex_machines.FIXED_ACCELERATOR_MACHINES.values()}
    | {h.accelerator or name for name, h in vertex_machines.TPU_HOSTS.items()}
    | set(vertex_machines.GPU_END_OF_SUPPORT)
))
#: The TPU VM machine types among KNOWN_ACCELERATORS (TPU v6e, TPU7x: no acceleratorType value), by pattern
#: (ct6e-standard-*): a refusal names them in words, apart from the accelerator types it lists.
TPU_MACHINE_PATTERNS: tuple[str, ...] = tuple(dict.fromkeys(
    f"{machine.rsplit('-', 1)[0]}-*" for machines in vertex_machines.TPU_NAMED_BY_MACHINE.values()
    for machine in machines))


def accelerator_choices(today: date) -> str:
    """What allowedAccelerators takes, as a refusal offers it: the accelerator types not past their end of support
    by `today` (an end-of-life name a stack lists still validates; it is just not offered), then the TPU VM machine
    types in words, never mixed in among them."""
    types = in_support((n for n in KNOWN_ACCELERATORS if n not in vertex_machines.TPU_HOSTS), today)
    return (f"{allowed(types)}, or for a TPU v6e or TPU7x (no acceleratorType value) its machine type: "
            f"{' or '.join(TPU_MACHINE_PATTERNS)}")


class GuardrailSettings(Guardrails):
    """`gcp-training-jobs:guardrails` as a stack declares it (see
    gcp_training_jobs.jobspec.review.guardrails.Guardrails)."""

    @model_validator(mode="before")
    @classmethod
    def _from_json_text(cls, value: Any) -> Any:
        """Pulumi hands object config to the program as JSON text ("" or nothing: no guardrails)."""
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else {}
            except ValueError as error:
                raise ValueError("expected a mapping of guardrails (allowedAccelerators, ...)") from error
        return value

    @field_validator("allowed_accelerators")
    @classmethod
    def _known_accelerators(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in value or ():
            if name not in KNOWN_ACCELERATORS:
                raise ValueError(f"{name!r} is not an accelerator type{suggestion(name, KNOWN_ACCELERATORS)}; "
                                 f"allowed: {accelerator_choices(today_of_rules())}")
        return value

    @field_validator("required_labels")
    @classmethod
    def _label_keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not LABEL_KEY.fullmatch(name):
                raise ValueError(f"{name!r} is not a label key; allowed: a lowercase letter, then up to 62 "
                                 "lowercase letters, digits, _ and -")
        return value


def stack_facts(settings: Any) -> dict[str, JobFacts]:
    """Every judged job of a stack (a StackSettings: model.py imports this module, so it is not named here) by name:
    its facts as it was judged (JobSettings.facts, load.Judged.facts), read again by no one."""
    return {name: job.facts for name, job in settings.jobs.items()}


def falling_back(settings: Any) -> frozenset[str]:
    """The names of a judged stack's jobs that have fallbacks (JobSettings.alternatives): a reservation they name
    does not hold them, so they are priced at their worst placement (review.cost.estimate's `falls_back`)."""
    return frozenset(name for name, job in settings.jobs.items() if job.alternatives)


def guardrail_problems_of(settings: Any, today: date | None = None, table: PriceTable | None = None) -> list[Problem]:
    """What a judged stack's jobs break of its guardrails, of the fixed job rules and of its monthly budget (guardrail
    `budget`); empty when none (the plan's review; the policy pack and the provider judge the same rules on the bodies
    they are given). `table`: the price table the cost guardrails read (default: the active one)."""
    jobs, falls_back, at = stack_facts(settings), falling_back(settings), placed(settings)
    monthly = settings.budget.monthly_usd if settings.budget is not None else None
    return (all_guardrail_problems(jobs, settings.guardrails, today, table, settings.resources, falls_back, at)
            + stack_budget_problems(jobs, monthly, table, falls_back, at))


def one_round(error: SpecError, file: str, today: date | None = None,
              table: PriceTable | None = None) -> tuple[list[Problem], tuple[Problem, ...]]:
    """Every problem of a stack file that did not judge, in one round (`validate` and `plan`), each naming `file`: the
    file's own (the SpecError's, in the file's order), then what its jobs that did judge break of the guardrails, the
    fixed job rules and the budget (guardrail_problems_of; a job with a mistake has no facts and is not held to them),
    each problem once; and those jobs' warnings, each once, but at a key a problem names (a credential refused). The
    stack's own keys not judged (settings.judge's StackSpecError without `judged`): the file's problems alone. A price
    table that cannot be read leaves the guardrails out (the file's problems are said, exit 1; the table is named,
    exit 2, once they are fixed)."""
    problems = [p.within(file=file) for p in error.problems]
    judged = getattr(error, "judged", None)  # settings.judge.StackSpecError (not named: model.py imports this module)
    if judged is None:
        return problems, ()
    try:
        broken = guardrail_problems_of(judged, today, table)
    except UnreadableError:
        broken = []
    problems += [p.within(file=file) for p in broken]
    refused = {p.path for p in problems}  # a credential refused in plain text is not also warned of there
    warnings = (w.within(file=file) for w in judged.warnings if w.path not in refused)
    return list(dict.fromkeys(problems)), tuple(dict.fromkeys(warnings))
