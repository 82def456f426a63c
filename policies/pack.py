"""The policies of the `gcp-training-jobs` CrossGuard pack: the stack's guardrails and the fixed rules.

Every policy calls the same pure functions as `python -m components plan` and the TrainingJob provider
(gcp_training_jobs.jobspec.review.guardrails and .cost), on the inputs the engine hands the analyzer:

- a TrainingJob's `job`, `backend` and `name` inputs are judged and rendered to the request body its
  backend would send (gcp_training_jobs.jobspec.render.bodies), so guardrails read what is actually sent;
- the monthly budget (guardrail `budget`) comes from the stack's registered pulumi-gcp Budget (its
  `amount.specifiedAmount` in USD), held against the stack's registered jobs' worst cases summed;
- the guardrails come from the stack's own config file (`stacks/Pulumi.<stack>.yaml`, found through the
  project's Pulumi.yaml and the stack name in each resource's URN). An analyzer plugin receives no stack
  config from the engine through a language host (only through the legacy `pulumi-analyzer-policy-*`
  route), so the file the program was configured from is read directly, with the same settings model.

This module builds no server: policies/__main__.py serves it; tests call the `validate_*` functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyPack,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import proxy as _proxy
from pydantic import ValidationError

from gcp_training_jobs.jobspec.catalog.credentials import masked_text
from gcp_training_jobs.jobspec.catalog.prices import PriceTableError
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError
from gcp_training_jobs.jobspec.core.names import JOB_TYPES, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.jobspec.review.cost import Placed
from gcp_training_jobs.jobspec.review.cost_text import (
    estimate_text,
    resource_text,
    source_lines,
    stack_text,
    stale_warning,
)
from gcp_training_jobs.jobspec.review.guardrails import (
    BUDGET_KEY,
    BUDGET_TYPE,
    GUARDRAILS_KEY,
    RULE_END_OF_LIFE,
    Guardrails,
    end_of_life_problems,
    guardrail_problems,
    stack_budget_problems,
    stack_estimate,
    stack_guardrail_problems,
)
from gcp_training_jobs.jobspec.review.quota_fit import RESOURCE_PREFIX, Asker, Placement, asked, asker_of
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.rules.tasks import today
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.persistent import RESOURCE_TYPE, ResourceFacts, registered_facts
from gcp_training_jobs.resources.fallbacks import alternative_job
from gcp_training_jobs.resources.job_model.declared import BACKEND, CHEAPEST_FIRST, FALLBACKS, JOB, NAME
from gcp_training_jobs.resources.job_model.inputs import judge_wire, known_only, preview_job_id
from gcp_training_jobs.resources.resource_rules import RULE_ADDITIVE_IAM, RULE_PRIVATE_BUCKETS, resource_problems
from gcp_training_jobs.resources.settings.guardrails import GuardrailSettings
from gcp_training_jobs.resources.settings.stack_file import find_project_root, stack_file, stacks_folder

PACK_NAME = "gcp-training-jobs"
_UNKNOWNS = frozenset(getattr(_proxy, name) for name in dir(_proxy) if name.startswith("UNKNOWN_"))

Report = Callable[..., None]


# --- The inputs the engine hands over, as plain data ---------------------------------------------------


def plain(value: Any) -> Any:
    """pulumi_policy's proxies as plain dicts and lists (read through, so unknowns do not raise)."""
    target = _target(value)
    if isinstance(target, Mapping):
        return {k: plain(target[k]) for k in target}
    if isinstance(target, Sequence) and not isinstance(target, (str, bytes)):
        return [plain(target[i]) for i in range(len(target))]
    return target


def _target(value: Any) -> Any:
    try:
        return value["__target"]  # pulumi_policy's proxies expose their wrapped value under this key
    except (KeyError, TypeError, IndexError):
        return value


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value in _UNKNOWNS


def stack_of(urn: str) -> str:
    """`urn:pulumi:prod::gcp-training-jobs::type::name` -> `prod`."""
    return urn.split("::", 1)[0].rsplit(":", 1)[-1]


def judged_job(name: str, props: Mapping[str, Any]) -> tuple[str, JobFacts] | None:
    """A TrainingJob's name and facts, judged from its inputs as the provider judges them; None where the job cannot
    be judged (unknown at preview, or invalid: the provider's check names what is wrong)."""
    job, backend = props.get(JOB.wire), props.get(BACKEND.wire)
    if not isinstance(job, dict) or not isinstance(backend, str) or is_unknown(backend):
        return None
    given = props.get(NAME.wire)
    name = given if isinstance(given, str) and not is_unknown(given) else name
    known = known_only(job, is_unknown)
    try:  # either vocabulary: trainingInput, or jobSpec with its region; read once, as the provider reads it
        judged = judge_wire(known, backend=backend, job_id=preview_job_id(str(name)))
    except SpecError:
        return None
    if judged.body is None:
        return None
    return str(name), judged.facts


def placed_job(props: Mapping[str, Any], written: JobFacts) -> Placed | None:
    """A `placement: cheapest` TrainingJob (`cheapestFirst`, its `fallbacks` its ranked candidates) priced where it
    may run: each candidate's job data (resources.fallbacks.alternative_job) judged as the provider's check judges
    it; None for another job, or when a candidate does not judge (the provider's check names what is wrong)."""
    given, job, backend = props.get(FALLBACKS.wire), props.get(JOB.wire), props.get(BACKEND.wire)
    if props.get(CHEAPEST_FIRST.wire) is not True or not isinstance(given, list) or not given \
            or not isinstance(job, dict) or not isinstance(backend, str):
        return None
    found = []
    for alternative in given:
        if not isinstance(alternative, Mapping) or is_unknown(alternative):
            return None
        data, bad = alternative_job(known_only(job, is_unknown), alternative)
        try:
            judged = None if bad else judge_wire(data, backend=backend, job_id=preview_job_id("job"))
        except SpecError:
            return None
        if judged is None or judged.body is None:
            return None
        found.append(judged.facts)
    return Placed(tuple(found), written)


def has_fallbacks(props: Mapping[str, Any]) -> bool:
    """Whether a TrainingJob's inputs give it fallbacks (a list with any entry, as the provider reads them:
    job_model.inputs.Inputs.fallbacks): a reservation it names does not hold it, so it is priced at its worst
    placement."""
    given = props.get(FALLBACKS.wire)
    return isinstance(given, list) and bool(given)


# --- The stack's guardrails, from its config file ------------------------------------------------------


@cache
def stack_guardrails(stack: str, cwd: str = "") -> tuple[Guardrails, tuple[Problem, ...]]:
    """The guardrails a stack declares (none when its file or key is absent), and problems reading them."""
    project = find_project_root(Path(cwd or Path.cwd()))
    if project is None:
        return Guardrails(), ()
    try:
        path = stack_file(stacks_folder(project), stack)  # the plan's and the settings' finder
        if path is None:
            return Guardrails(), ()
        data = read_yaml(path) or {}
    except TrainingJobsError as error:
        return Guardrails(), (Problem(GUARDRAILS_KEY, str(error)),)
    config = data.get("config") if isinstance(data, dict) else None
    raw = config.get(GUARDRAILS_KEY) if isinstance(config, dict) else None
    try:
        return GuardrailSettings.model_validate(raw or {}), ()
    except ValidationError as error:
        return Guardrails(), tuple(Problem(f"{GUARDRAILS_KEY}.{p.path}".rstrip("."), p.message, str(path))
                                   for p in from_validation_error(error, GuardrailSettings))


def _report(problems: Sequence[Problem], report: Report) -> None:
    for problem in problems:
        report(masked_text(str(problem)))  # a message that echoes a value shows its credential masked


# --- The policies ---------------------------------------------------------------------------------------


def validate_job_guardrails(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type not in JOB_TYPES:
        return
    rails, problems = stack_guardrails(stack_of(args.urn))
    props = plain(args.props)
    job = judged_job(args.name, props)
    if job is not None:
        placed = placed_job(props, job[1])  # placement: cheapest: held to them at the candidate it would take
        problems += tuple(guardrail_problems(placed.placements[0] if placed else job[1], job[0], rails,
                                             falls_back=has_fallbacks(props)))
    _report(problems, report)


def validate_end_of_life(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type not in JOB_TYPES:
        return
    job = judged_job(args.name, plain(args.props))
    if job is not None:
        _report(end_of_life_problems(job[1], job[0]), report)


def validate_private_buckets(args: ResourceValidationArgs, report: Report) -> None:
    _report([p for p in resource_problems(args.resource_type, args.name, plain(args.props))
             if p.path == RULE_PRIVATE_BUCKETS], report)


def validate_additive_iam(args: ResourceValidationArgs, report: Report) -> None:
    _report([p for p in resource_problems(args.resource_type, args.name, plain(args.props))
             if p.path == RULE_ADDITIVE_IAM], report)


@dataclass(frozen=True)
class Registered:
    """What a stack registered that the stack's guardrails and cost count: its training jobs and its persistent
    resources (pulumi-gcp's AiPersistentResource, whose machines are billed while it exists), each by name."""

    stack: str | None
    jobs: dict[str, JobFacts]
    resources: dict[str, ResourceFacts]
    falls_back: frozenset[str] = frozenset()
    """The jobs with fallbacks (priced at their worst placement, off any reservation: review.cost.estimate)."""
    placed: Mapping[str, Placed] = field(default_factory=dict)
    """The `placement: cheapest` jobs, priced where they may run (review.cost.estimate_placed)."""
    budget_usd: float | None = None
    """The monthly amount of the stack's Budget in USD (None: no Budget, or one not in USD, or unknown)."""


def registered(args: StackValidationArgs) -> Registered:
    jobs: list[tuple[str, JobFacts]] = []
    resources: dict[str, ResourceFacts] = {}
    falls_back: set[str] = set()
    placed: dict[str, Placed] = {}
    stack, budgets = None, []
    for resource in args.resources:
        stack = stack or stack_of(resource.urn)
        if resource.resource_type in JOB_TYPES:
            props = plain(resource.props)
            job = judged_job(resource.name, props)
            if job is not None:
                jobs.append(job)
                if has_fallbacks(props):
                    falls_back.add(job[0])
                if (where := placed_job(props, job[1])) is not None:
                    placed[job[0]] = where
        elif resource.resource_type == RESOURCE_TYPE:
            held = registered_facts(resource.name, known_only(plain(resource.props), is_unknown))
            if held is not None:
                resources[held.name] = held
        elif resource.resource_type == BUDGET_TYPE:
            budgets.append(budget_amount(plain(resource.props)))
    known = [amount for amount in budgets if amount is not None]  # one per stack; several: the smallest holds
    return Registered(stack, dict(sorted(jobs, key=lambda job: job[0])), dict(sorted(resources.items())),
                      falls_back=frozenset(falls_back), placed=placed,
                      budget_usd=min(known) if known else None)


def budget_amount(props: Mapping[str, Any]) -> float | None:
    """A Budget's monthly amount in USD from its inputs (`amount.specifiedAmount`: units and nanos; a currency other
    than USD, or an unknown value, is no amount the review can hold dollars to)."""
    amount = ((props.get("amount") or {}).get("specifiedAmount") or {}) if isinstance(props.get("amount"), dict) else {}
    currency, units, nanos = amount.get("currencyCode"), amount.get("units"), amount.get("nanos") or 0
    if currency not in (None, "USD") or units is None or is_unknown(units) or is_unknown(nanos):
        return None
    try:
        return int(str(units)) + float(nanos) / 1e9
    except ValueError:
        return None


def validate_stack_guardrails(args: StackValidationArgs, report: Report) -> None:
    found = registered(args)
    if found.stack is None:
        return
    rails, _ = stack_guardrails(found.stack)  # reading problems are reported once, per job
    _report(stack_guardrail_problems(found.jobs, rails, resources=found.resources, falls_back=found.falls_back,
                                     placed=found.placed)
            + stack_budget_problems(found.jobs, found.budget_usd, falls_back=found.falls_back, placed=found.placed),
            report)


def validate_estimated_cost(args: StackValidationArgs, report: Report) -> None:
    """Advisory: the cost of every job and persistent resource and of the stack (per hour, on demand and Spot, at
    the rate each runs at, and at worst), the price table with its sources, and a warning when the table is old."""
    found = registered(args)
    if not found.jobs and not found.resources:
        return
    try:
        cost = stack_estimate(found.jobs, resources=found.resources, falls_back=found.falls_back,
                              placed=found.placed)
    except PriceTableError as error:
        report(f"no cost estimate: {error}")
        return
    lines = [f"{e.name}: {estimate_text(e)}" for e in cost.jobs]
    lines += [f"persistent resource {r.name}: {resource_text(r)}" for r in cost.resources]
    lines += [f"stack: {stack_text(cost)}"]
    lines += [f"prices: {line}" for line in source_lines(cost.table)]
    warning = stale_warning(cost.table, today())
    lines += [f"warning: {warning}"] if warning else []
    report("\n".join(lines))


def validate_quota_asked(args: StackValidationArgs, report: Report) -> None:
    """Advisory: what the stack asks of Vertex AI's custom training quotas, per region and metric and by job, by the
    one rule every review reads (jobspec.review.quota_fit.asked): offline, each registered persistent resource at its
    machines at the most and each Vertex AI job as written, from its own inputs; the limits are read by `plan
    --online` and each job's preview."""
    found = registered(args)
    stack = [Asker(f"{RESOURCE_PREFIX}{name}", (Placement(held.region or "", needs_of(held.as_job())),))
             for name, held in found.resources.items()]
    stack += [asker_of(name, (facts,), facts.region or "") for name, facts in found.jobs.items()
              if facts.backend == VERTEX]
    lines = [f"{region} {metric}: {ask['units']} ({', '.join(f'{who} {n}' for who, n in ask['by'].items())})"
             for region, metrics in asked(stack).items() for metric, ask in metrics.items()]
    if lines:
        report("\n".join(["quota asked (offline; the limits are read by `plan --online` and each job's preview):",
                           *lines]))


def policies() -> list[Policy]:
    mandatory, advisory = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY
    return [
        ResourceValidationPolicy(name="training-job-guardrails", enforcement_level=mandatory,
                                 description=f"Training jobs keep the stack's guardrails ({GUARDRAILS_KEY}).",
                                 validate=validate_job_guardrails),
        StackValidationPolicy(name="stack-guardrails", enforcement_level=mandatory,
                              description="The stack's jobs and persistent resources together keep "
                                          "maxAcceleratorsPerStack and maxHourlyUsd, a persistent "
                                          "resource's accelerators are allowed, and the jobs' worst case fits "
                                          f"the stack's monthly budget ({BUDGET_KEY}).",
                              validate=validate_stack_guardrails),
        ResourceValidationPolicy(name=RULE_END_OF_LIFE, enforcement_level=mandatory,
                                 description="No training job uses an accelerator past its end of support.",
                                 validate=validate_end_of_life),
        ResourceValidationPolicy(name=RULE_PRIVATE_BUCKETS, enforcement_level=mandatory,
                                 description="Buckets have uniform bucket-level access and public access "
                                             "prevention enforced.",
                                 validate=validate_private_buckets),
        ResourceValidationPolicy(name=RULE_ADDITIVE_IAM, enforcement_level=mandatory,
                                 description="IAM is granted by additive members only (no IAMBinding or "
                                             "IAMPolicy resources).",
                                 validate=validate_additive_iam),
        StackValidationPolicy(name="estimated-cost", enforcement_level=advisory,
                              description="Estimated cost per hour while every machine runs, and at worst "
                                          "(no price is guessed).",
                              validate=validate_estimated_cost),
        StackValidationPolicy(name="quota-asked", enforcement_level=advisory,
                              description="What the stack asks of Vertex AI's custom training quotas, per region "
                                          "and metric and by job (the one rule every review reads).",
                              validate=validate_quota_asked),
    ]


def serve() -> None:
    """Start the analyzer (blocks; the engine stops it)."""
    PolicyPack(name=PACK_NAME, policies=policies(), enforcement_level=EnforcementLevel.MANDATORY)
