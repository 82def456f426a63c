"""Money as the review says it: a sum of known and unknown parts (`Amount`) and its words (`usd`, `usd_total`,
`hours_text`, `missing_text`). Pure: the one wording every reader of a cost uses (the plan, the provider's cost line,
status, spend, the diff, the policy pack)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Amount:
    """A sum in USD (per hour, or in all for a worst case) of the parts whose price is known, and the parts whose
    price is not, each as `N x WHAT (why)`."""

    known: float = 0.0
    unknown: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unknown

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.known + other.known, self.unknown + other.unknown)

    def times(self, factor: float) -> Amount:
        return Amount(self.known * factor, self.unknown)

    def text(self, per_hour: bool = True) -> str:
        """`$12.34/h` (or `$1,234.56` in all), or `unknown ($0.87/h known; no price for ...)`."""
        value = usd(self.known) if per_hour else usd_total(self.known)
        if self.complete:
            return value
        missing = "; ".join(self.unknown)
        return f"unknown ({value} known; no price for {missing})" if self.known else f"unknown (no price for {missing})"

    def short(self, per_hour: bool = True) -> str:
        """`$12.34/h`, or `unknown (at least $0.87/h)` / `unknown`: the parts without a price said elsewhere."""
        value = usd(self.known) if per_hour else usd_total(self.known)
        if self.complete:
            return value
        return f"unknown (at least {value})" if self.known else "unknown"


def missing_text(*amounts: Amount) -> str:
    """`; no price for 4 x NVIDIA_TESLA_K80 (why)` for the unknown parts of the amounts, each once; or ""."""
    missing = dict.fromkeys(u for amount in amounts for u in amount.unknown)
    return f"; no price for {'; '.join(missing)}" if missing else ""


def usd(value: float) -> str:
    """Per hour: `$1,234.56/h`; below a cent `$0.0042/h`."""
    return f"${value:,.2f}/h" if value >= 0.01 or value == 0 else f"${value:.4f}/h"


def usd_total(value: float) -> str:
    """In all: `$1,234.56`."""
    return f"${value:,.2f}"


def hours_text(hours: float) -> str:
    """`168 h`, `1.5 h`, `0.25 h`."""
    return f"{hours:,.2f}".rstrip("0").rstrip(".") + " h"


def total(amounts: Iterable[Amount]) -> Amount:
    """The sum of several amounts (their unknown parts kept)."""
    out = Amount()
    for amount in amounts:
        out = out + amount
    return out


def named_total(amounts: Iterable[tuple[str, Amount]]) -> Amount:
    """A sum whose unknown parts say which job they belong to."""
    return total(Amount(a.known, tuple(f"{name}: {u}" for u in a.unknown)) for name, a in amounts)
