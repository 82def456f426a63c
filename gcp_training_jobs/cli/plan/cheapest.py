"""The cheapest placement within the stack's bounds, for a reviewer (`plan`, its JSON, `plan --online`, `diff`): each
job's candidates as the settings judged them (`StackSettings.candidates`), ranked and, online, held to the quota free
after the stack's other jobs (jobspec.review.placement); the plan document's `placement.NAME.cheapest` and
`placement.NAME.candidates`, and the text's lines. Nothing here without `gcp-training-jobs:placement`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.review.cost import estimate
from gcp_training_jobs.jobspec.review.money import usd
from gcp_training_jobs.jobspec.review.placement import Candidate, Choice, choose, stack_saving
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.placement import CHEAPEST

#: (job name, its candidates) -> the candidates held to the quota (plan --online).
Hold = Callable[[str, Sequence[Candidate]], Sequence[Candidate]]


def choices_of(settings: StackSettings, table: PriceTable, hold: Hold | None = None) -> dict[str, Choice]:
    """Each job with candidates: its choice (offline, or with `hold`, online)."""
    found = {}
    for name, candidates in settings.candidates.items():
        job = settings.jobs[name]
        held = tuple(hold(name, candidates)) if hold is not None else candidates
        found[name] = choose(name, estimate(job.facts, name, table, falls_back=bool(job.alternatives)), held, table,
                             online=hold is not None, cheapest_set=job.placement == CHEAPEST)
    return found


def add_to_document(document: dict[str, Any], settings: StackSettings, choices: Mapping[str, Choice]) -> None:
    """`placement.NAME.{cheapest, candidates, excluded, orderText}` and `placementBounds` (with what the stack would
    save per hour, each job at its cheapest) in the plan document."""
    if settings.placement is None:
        return
    for name, choice in choices.items():
        document.setdefault("placement", {}).setdefault(name, {}).update(choice.as_dict())
    document["placementBounds"] = {
        "key": f"{NAMESPACE}:placement", "regions": list(settings.placement.regions),
        "strategies": list(settings.placement.strategies),
        "savingUsdPerHour": stack_saving(choices.values()),
        "online": any(c.online for c in choices.values()),
    }


def text_lines(document: Mapping[str, Any]) -> list[str]:
    """The plan's section: the bounds, each job's suggestion (or the order `placement: cheapest` tries), the sum."""
    bounds = document.get("placementBounds")
    if not bounds:
        return []
    out = ["", f"Placement within {bounds['key']} (regions {', '.join(bounds['regions'])}; strategies "
               f"{', '.join(bounds['strategies'])}):"]
    for name, placed in sorted((document.get("placement") or {}).items()):
        if "candidates" not in placed:
            continue
        if placed.get("placementCheapest") and placed.get("orderText"):
            out.append(f"    {name}: placement cheapest, {placed['orderText']}")
        elif placed.get("cheapest") and placed["cheapest"].get("text"):
            out.append(f"    {name}: {placed['cheapest']['text']}")
        else:
            out.append(f"    {name}: nothing cheaper within the stack's placement")
        if not placed["candidates"]:
            out += [f"        no candidate: {why}" for c in placed.get("excluded", ())
                    for why in c.get("excluded", ())[:1]][:3]
    saving = bounds["savingUsdPerHour"]
    out.append(f"    the stack would save {usd(saving)} at its cheapest placements" if saving
               else "    the stack is at its cheapest placements")
    return out


def cheaper_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """What the diff and the pull request comment say of a plan's placement: each job's suggestion (or the order
    `placement: cheapest` tries), and what the stack would save per hour at its cheapest placements."""
    lines = {}
    for name, placed in sorted((document.get("placement") or {}).items()):
        if placed.get("placementCheapest") and placed.get("orderText"):
            lines[name] = f"placement cheapest, {placed['orderText']}"
        elif (placed.get("cheapest") or {}).get("text"):
            lines[name] = placed["cheapest"]["text"]
    return {"lines": lines, "savingUsdPerHour": document["placementBounds"]["savingUsdPerHour"]}
