"""`gcp-training-jobs:budget`: the stack's monthly budget, the net under the stack once a merge is deployed.

The settings model only (judged like every stack key: the file, the key, what is allowed). What it makes is
gcp_training_jobs.resources.budget (one pulumi-gcp `billing.Budget` per stack, and with `enforce: true` what stops
the stack's jobs); the guardrail `budget` that holds the stack's worst case to `monthlyUsd` is
gcp_training_jobs.jobspec.review.guardrails (`stack_budget_problems`), enforced by `validate`, `plan`, the provider's
check and the policy pack.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from gcp_training_jobs.jobspec.vocab.training_input import WireModel
from gcp_training_jobs.resources.settings.secrets import OPAQUE

#: A Cloud Billing account id (`billingAccounts/{billingAccountId}` in the Budget API's names): 0X0X0X-0X0X0X-0X0X0X.
BILLING_ACCOUNT = re.compile(r"[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}")
#: The threshold rules on current spend when none are given: half, 90% and all of the budget.
DEFAULT_THRESHOLDS = (0.5, 0.9, 1.0)
#: A budget's month begins at midnight US and Canadian Pacific Time, UTC-8 (the Budget API's CalendarPeriod: "All
#: calendar times begin at 12 AM US and Canadian Pacific Time (UTC-8)").
BUDGET_OFFSET = timedelta(hours=-8)


def month_start(now: datetime) -> datetime:
    """Where the budget's current month began, in UTC (the 1st at 00:00 UTC-8)."""
    local = now.astimezone(UTC) + BUDGET_OFFSET
    return datetime(local.year, local.month, 1, tzinfo=UTC) - BUDGET_OFFSET


class BudgetSettings(WireModel):
    """`gcp-training-jobs:budget`: a monthly budget on the stack's jobs (its project, its jobs' `pulumi-stack`
    label), with alerts at `thresholds` of current spend and at the whole budget forecast; `enforce: true` also
    cancels the stack's running jobs once the month's spend reaches the budget."""

    billing_account: str
    """The Cloud Billing account that pays for the project (its id, e.g. 012345-6789AB-CDEF01)."""
    monthly_usd: float = Field(gt=0, allow_inf_nan=False)
    """The budget per calendar month in USD; the stack's worst case (its jobs' worst cases summed) must fit in it."""
    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS
    """Fractions of the budget (1.0 = all of it) whose crossing by current spend alerts the billing account's
    administrators (and, with enforce, the stack's topic)."""
    enforce: bool = False
    """Cancel the stack's running custom and tuning jobs once the month's spend reaches the budget (a Pub/Sub topic
    the budget notifies and a Cloud Run function that cancels them)."""

    @field_validator("billing_account")
    @classmethod
    def _account(cls, value: str) -> str:
        if value == OPAQUE:
            return value
        if value.startswith("billingAccounts/"):
            raise ValueError(f"give the account's id without billingAccounts/ (e.g. {value.split('/', 1)[1]!r})")
        if not BILLING_ACCOUNT.fullmatch(value):
            raise ValueError("not a Cloud Billing account id; allowed: three groups of 6 uppercase hex digits joined "
                             "by -, e.g. 012345-6789AB-CDEF01 (`gcloud billing accounts list`)")
        return value

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value:
            raise ValueError("empty; allowed: one or more fractions of the budget, e.g. [0.5, 0.9, 1.0]")
        for fraction in value:
            if not 0 < fraction <= 10:
                raise ValueError(f"{fraction:g} is not a fraction of the budget; allowed: numbers above 0 and at most "
                                 "10 (1.0 is the whole budget), e.g. [0.5, 0.9, 1.0]")
        return tuple(sorted(set(value)))


def _from_config(value: Any) -> Any:
    """Pulumi hands object config to the program as JSON text; "" and {} (Pulumi.yaml's default) mean no budget."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else None
        except ValueError as error:
            raise ValueError("expected a mapping: billingAccount, monthlyUsd, thresholds, enforce") from error
    return value or None


#: The field of StackSettings (settings/model.py): a budget, or None when the stack declares none.
BudgetField = Annotated[BudgetSettings | None, BeforeValidator(_from_config)]

