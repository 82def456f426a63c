"""The words of a cost estimate (review.cost prices only; review.money words an amount): a job's one line, how it
runs and is billed, its worst case, a priced part, the stack's line, a persistent resource's line, the price table
and its sources, and the warning of a stale table. `plan`, the provider's cost line, the guardrails' problems,
`status`, `spend` and the policy pack say an estimate with these.
"""

from __future__ import annotations

from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.catalog.prices import Price, PriceTable
from gcp_training_jobs.jobspec.core.names import command
from gcp_training_jobs.jobspec.review.cost import Estimate, Part, ResourceEstimate, StackEstimate
from gcp_training_jobs.jobspec.review.money import hours_text, missing_text, usd

#: A price table whose oldest prices are older than this (in days) makes `plan` warn.
MAX_PRICE_AGE_DAYS: Final = 180
#: The command that writes a current table (gcp_training_jobs.cli.prices).
REFRESH_COMMAND: Final = command("prices refresh")
#: The rates of the table (PriceTable.strategy_rate), as the text says them.
RATE_WORDS: Final = MappingProxyType({"on_demand": "on-demand", "spot": "Spot"})
#: How a job runs at each rate, in a sentence.
RUNS_ON: Final = MappingProxyType({"on_demand": "on demand", "spot": "on Spot"})


def _unit_price(price: Price, rate: str) -> str:
    value = price.rate(rate)
    return "unknown" if value is None else usd(value)


def part_text(part: Part) -> str:
    """`4 x a2-ultragpu-8g (machine, GPUs included): $46.63/h each on demand, $28.16/h Spot; BASIS`."""
    price = part.price
    if price is None or not price.known:
        return f"{part.units} x {part.what}: unknown ({part.why('on_demand')})"
    kind = price.unit + (", its accelerators included" if price.includes_accelerators else "")
    spot = _unit_price(price, "spot") + (f" ({price.spot_reason})" if price.spot is None else "")
    return (f"{part.units} x {part.what} ({kind}): {usd(price.on_demand or 0.0)} each on demand, {spot} Spot; "
            f"{part.basis}")


def runs_as(cost: Estimate) -> str:
    """`on demand`, `SPOT, at Spot rates`, `FLEX_START, at the on-demand rate (an upper bound)`, `on reservation R
    (its machines paid by the reservation)`."""
    if cost.reservation is not None:
        return f"on reservation {cost.reservation} (its machines paid by the reservation)"
    if cost.strategy is None and cost.rate == "on_demand":
        return "on demand"
    words = RATE_WORDS[cost.rate]
    rate = f"at the {words} rate" if cost.rate == "on_demand" else f"at {words} rates"
    bound = " (an upper bound)" if cost.billing.get("bound") == "upper" else ""
    return f"{cost.strategy or 'STANDARD'}, {rate}{bound}"


def worst_case_text(cost: Estimate) -> str:
    """`$32,847.36 ($195.52/h x 168 h; no timeout set: Vertex AI's default, 7 days)` (unknown parts: see
    estimate_text); a `placement: cheapest` job's at its dearest candidate: `$2.95 at its dearest candidate,
    us-central1 STANDARD ($0.98/h x 3 h; ...)`."""
    if cost.worst_at is not None:
        dearest = cost.worst_at
        return f"{dearest.worst_case.short(per_hour=False)} at its dearest candidate, {where_text(dearest)} " \
               f"({_worst_how(dearest)})"
    return f"{cost.worst_case.short(per_hour=False)} ({_worst_how(cost)})"


def _worst_how(cost: Estimate) -> str:
    """`$195.52/h x 168 h; no timeout set: Vertex AI's default, 7 days`."""
    how = f"{cost.hourly.short()} x {hours_text(cost.timeout.hours)}"
    if cost.timeout.per_trial and (cost.trials > 1 or cost.runs > 1):
        per_trial = cost.hourly.times(1 / cost.runs).short()
        how = f"{cost.trials} trials x {per_trial} x {hours_text(cost.timeout.hours)}"
    return f"{how}; {cost.timeout.text()}"


def where_text(cost: Estimate) -> str:
    """`us-east4 SPOT`: a candidate's region and strategy."""
    return f"{cost.region or 'region unknown'} {cost.strategy or 'STANDARD'}"


def candidate_text(cost: Estimate) -> str:
    """Where a `placement: cheapest` job is priced (review.cost.estimate_placed): `us-east4 SPOT (the candidate it
    would take first, placement: cheapest; as written it runs on demand, this candidate on Spot)` (the change of
    rate said when there is one); "" for any other job."""
    written = cost.written
    if written is None:
        return ""
    was = str(cost.table.strategy_rate(written.strategy)["rate"])
    change = f"; as written it runs {RUNS_ON[was]}, this candidate {RUNS_ON[cost.rate]}" if was != cost.rate else ""
    return f"{where_text(cost)} (the candidate it would take first, placement: cheapest{change})"


def estimate_text(cost: Estimate) -> str:
    """One line: `us-central1, runs on demand: $1.23/h (on demand $1.23/h; Spot $0.45/h); worst case ...`, then the
    parts without a price, each with its reason, once; a `placement: cheapest` job's begins with the candidate it
    would take (candidate_text)."""
    where = candidate_text(cost) or cost.region or "region unknown"
    if cost.on_resource is not None:
        return (f"{where}, runs on persistent resource {cost.on_resource}: $0.00/h of machines of its own (the "
                "resource's machines are billed while it exists)")
    rates = "; an ml v1 job, at Vertex AI's rates" if cost.ml_v1 else ""
    if cost.reservation is not None:
        return (f"{where}, {reservation_text(cost)}; worst case {worst_case_text(cost)}"
                f"{missing_text(cost.machines_on_demand)}")
    if cost.may_leave:
        rates += f"; {cost.may_leave}"
    return (f"{where}, runs {runs_as(cost)}: {cost.hourly.short()} (on demand {cost.on_demand.short()}; Spot "
            f"{cost.spot.short()}); worst case {worst_case_text(cost)}{rates}"
            f"{missing_text(cost.on_demand, cost.spot)}")


def reservation_text(cost: Estimate) -> str:
    """`on reservation R: its machines are paid by the reservation ($265.47/h on demand); the job adds $34.63/h
    (Vertex AI's training management fee, at most 15% of the machines' on-demand rate)`."""
    share = f"{prices.RESERVATION_FEE.share * 100:g}%"
    return (f"on reservation {cost.reservation}: its machines are paid by the reservation "
            f"({cost.machines_on_demand.short()} on demand); the job adds {cost.hourly.short()} (Vertex AI's "
            f"training management fee, at most {share} of the machines' on-demand rate)")


def stack_text(cost: StackEstimate) -> str:
    """`$1.23/h at the jobs' rates (on demand $2.34/h; Spot $0.98/h); worst case $1,234.56`, then the parts without
    a price (by job), once."""
    held = ""
    if cost.resources:
        names = ", ".join(r.name for r in cost.resources)
        held = (f"; persistent resources {names} counted at the most, on demand, and not in the worst case: "
                "they are billed while they exist")
    return (f"{cost.hourly.short()} at the jobs' rates (on demand {cost.on_demand.short()}; Spot "
            f"{cost.spot.short()}); worst case {cost.worst_case.short(per_hour=False)}{held}"
            f"{missing_text(cost.on_demand, cost.spot)}")


def resource_text(cost: ResourceEstimate) -> str:
    """`us-central1, on demand while it exists: $1.23/h at the least, $4.92/h at the most`."""
    span = (cost.most.on_demand.short() if cost.least.parts == cost.most.parts
            else f"{cost.least.on_demand.short()} at the least, {cost.most.on_demand.short()} at the most")
    return (f"{cost.region or 'region unknown'}, on demand while it exists: {span}"
            f"{missing_text(cost.least.on_demand, cost.most.on_demand)}")


# --- The table -------------------------------------------------------------------------------------


def table_line(table: PriceTable) -> str:
    """`bundled snapshot (gcp_training_jobs/jobspec/catalog/prices_table.json) of 2026-11-23, oldest prices
    2026-07-30`."""
    kind = "bundled snapshot" if table.path == str(prices.BUNDLED) else f"{table.kind} table {table.path}"
    return f"{kind} of {table.date.isoformat()}, oldest prices {table.oldest.isoformat()}"


def source_lines(table: PriceTable | None = None) -> list[str]:
    """The table, then one line per source of its prices (plan, the policy pack and the provider print them)."""
    table = table or prices.active_table()
    return [table_line(table), *table.source_lines()]


def stale_warning(table: PriceTable, today: date) -> str | None:
    """A warning when the table's oldest prices are more than MAX_PRICE_AGE_DAYS old on `today`, else None."""
    age = (today - table.oldest).days
    if age <= MAX_PRICE_AGE_DAYS:
        return None
    return (f"the price table's oldest prices are of {table.oldest.isoformat()}, {age} days before "
            f"{today.isoformat()} (more than {MAX_PRICE_AGE_DAYS}): estimates may be out of date; refresh the "
            f"table with `{REFRESH_COMMAND}`")
