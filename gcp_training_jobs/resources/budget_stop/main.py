"""Stops a stack's Vertex AI jobs once its month's spend reaches its budget: a Cloud Run function (Python runtime)
that the stack's budget notifies through a Pub/Sub topic, as Google's "Control resource usage with notifications"
(https://cloud.google.com/billing/docs/how-to/control-usage) does for Compute Engine.

Google's notification (https://cloud.google.com/billing/docs/how-to/budgets-programmatic-notifications, read
2026-12-02): the Pub/Sub message's `attributes` are `billingAccountId`, `budgetId` and `schemaVersion` ("1.0"); its
`data` is base64 JSON with `budgetDisplayName`, `costAmount`, `costIntervalStart`, `budgetAmount`,
`budgetAmountType`, `alertThresholdExceeded` and `currencyCode` (the amounts are numbers); it comes several times a
day, whatever the spend, published by Cloud Billing as billing-budget-alert@system.gserviceaccount.com (the one
publisher resources/budget.py grants on the topic). The function acts only on a message that is well formed and its
own budget's (`budgetDisplayName`, and the `budgetId` and `billingAccountId` attributes when Google sends them) with
finite, non-negative amounts and `costAmount` >= `budgetAmount`. Any other message (bad base64, not UTF-8, not a
JSON object, an amount missing, not a number, infinite or negative, a budget of 0, another budget's) is logged
and ignored, never raised: `Ignored` says why. Once the budget is spent it lists the custom and tuning jobs
carrying the stack's `pulumi-stack` label in the stack's regions (every page; the label checked again on each job)
and cancels those queued, pending or running. Each list asks only for the jobs' name, state and labels (the
`fields` parameter, list_fields): a job's spec, its environment included, never reaches the function. A job already
cancelling or over is left alone, so a second message cancels nothing again, and a job without the stack's label
(another stack's) is never touched. A list whose page token repeats or is not text, or that runs past MAX_PAGES
pages, is not followed on: the jobs found are cancelled, then the run fails saying which list is partial.

Only the Cloud Run functions Python runtime and google-api-python-client (requirements.txt) are used: this file
is uploaded on its own. Its configuration is the function's environment: STACK_LABEL (`pulumi-stack=VALUE`),
PROJECT, REGIONS (comma-separated), BUDGET_DISPLAY_NAME, BUDGET_ID and BILLING_ACCOUNT (the budget's id and its
billing account, checked against the message's attributes; either may be unset), and AIPLATFORM_ENDPOINT (a test's
loopback emulator; default: each region's Vertex AI endpoint).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: The job collections a stack's jobs live in, and the states of a job that still runs or will (Vertex AI v1).
COLLECTIONS = ("customJobs", "hyperparameterTuningJobs")
RUNNING_STATES = frozenset({"JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING"})
#: The most pages of one list (a collection in a region) the function reads: far past a stack's jobs in one region
#: (a page holds one job at the least, a default page many), while a list whose tokens never end stops after 1000
#: requests, and the jobs found are cancelled, instead of running until the function's timeout stops it with none.
MAX_PAGES = 1000
#: The schema version of the notifications the function reads (Google's `schemaVersion` attribute).
SCHEMA_VERSION = "1.0"
#: How much of an untrusted value a log line shows.
SHOWN = 80


def list_fields(collection: str) -> str:
    """The `fields` parameter of a list (Google's partial response): the jobs' name, state and labels and the next
    page's token, nothing of a job's spec (its args and environment)."""
    return f"{collection}(name,state,labels),nextPageToken"


class Ignored(ValueError):
    """A message the function does not act on, and why (logged, never raised out of the entry point)."""


@dataclass(frozen=True)
class Notice:
    """A budget notification's figures, and the attributes naming its budget ("" when Google's message has none)."""

    budget: str
    cost: float
    amount: float
    currency: str
    since: str
    budget_id: str = ""
    billing_account: str = ""

    @property
    def spent(self) -> bool:
        """The month's spend has reached the budget (`costAmount` >= `budgetAmount`)."""
        return self.cost >= self.amount


def _shown(value: Any) -> str:
    """An untrusted value as a log line shows it: its repr, cut to SHOWN characters."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "...'"


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false",
            type(None): "null"}.get(type(value), type(value).__name__)


def _amount(data: Mapping[str, Any], key: str) -> float:
    """A finite, non-negative number of the notification (Google sends the amounts as JSON numbers)."""
    if key not in data:
        raise Ignored(f"no {key}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Ignored(f"{key} is {_kind(value)}, not a number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise Ignored(f"{key} is not a finite number")
    if number < 0:
        raise Ignored(f"{key} is negative ({number})")
    return number


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise Ignored(f"{where} {key} is {_kind(value)}, not text")
    return value


def notice_of(message: Any) -> Notice:
    """The figures of a Pub/Sub message (`{"data": base64 JSON, "attributes": {...}}`) as the Budget API sends it; a
    message that is not one raises Ignored, saying why."""
    if not isinstance(message, Mapping):
        raise Ignored(f"the message is {_kind(message)}, not an object")
    attributes = message.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise Ignored(f"the attributes are {_kind(attributes)}, not an object")
    version = _text(attributes, "schemaVersion", "attribute") or SCHEMA_VERSION
    if version != SCHEMA_VERSION:
        raise Ignored(f"schemaVersion {_shown(version)} is not {SCHEMA_VERSION}")
    encoded = message.get("data")
    if not isinstance(encoded, str) or not encoded:
        raise Ignored("no data" if not encoded else f"the data is {_kind(encoded)}, not base64 text")
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise Ignored("the data is not base64") from None
    try:
        data = json.loads(decoded.decode("utf-8"))
    except UnicodeDecodeError:
        raise Ignored("the data is not UTF-8") from None
    except (ValueError, RecursionError):
        raise Ignored("the data is not JSON") from None
    if not isinstance(data, dict):
        raise Ignored(f"the data is {_kind(data)}, not a JSON object")
    budget = _text(data, "budgetDisplayName", "data")
    if not budget:
        raise Ignored("no budgetDisplayName")
    cost, amount = _amount(data, "costAmount"), _amount(data, "budgetAmount")
    if amount == 0:  # the stack's budget is more than 0 (gcp-training-jobs:budget's monthlyUsd): 0 >= 0 is no signal
        raise Ignored("budgetAmount is 0")
    return Notice(budget, cost, amount,
                  _text(data, "currencyCode", "data"), _text(data, "costIntervalStart", "data"),
                  _text(attributes, "budgetId", "attribute"), _text(attributes, "billingAccountId", "attribute"))


@dataclass(frozen=True)
class Stack:
    """Whose jobs the function stops: the stack's label, its project, regions and budget's display name."""

    label_key: str
    label_value: str
    project: str
    regions: tuple[str, ...]
    budget: str
    budget_id: str = ""
    billing_account: str = ""

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Stack:
        key, _, value = env["STACK_LABEL"].partition("=")
        regions = tuple(r.strip() for r in env["REGIONS"].split(",") if r.strip())
        return cls(key, value, env["PROJECT"], regions, env.get("BUDGET_DISPLAY_NAME", ""),
                   env.get("BUDGET_ID", ""), env.get("BILLING_ACCOUNT", ""))


def foreign(stack: Stack, notice: Notice) -> str | None:
    """Why this message is not the stack's budget's (its display name, or an attribute naming another budget or
    billing account); None when it is."""
    if not stack.budget or notice.budget != stack.budget:
        return f"budgetDisplayName {_shown(notice.budget)} is not this stack's budget"
    for attribute, mine, theirs in (("budgetId", stack.budget_id, notice.budget_id),
                                    ("billingAccountId", stack.billing_account, notice.billing_account)):
        if mine and theirs and theirs != mine:
            return f"{attribute} {_shown(theirs)} is not this stack's budget's"
    return None


def decide(stack: Stack, notice: Notice) -> bool:
    """Whether this message asks to stop the stack's jobs: its own budget's, and spent."""
    return foreign(stack, notice) is None and notice.spent


def running_jobs(stack: Stack, collection: Callable[[str, str], Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """(collection, job name) of the stack's jobs still queued, pending or running, in every region, every page;
    and why each list that could not be read whole stopped (its jobs read so far are among the first).
    `collection(region, name)`: the googleapiclient collection (customJobs or hyperparameterTuningJobs)."""
    wanted = f'labels.{stack.label_key}="{stack.label_value}"'
    found: list[tuple[str, str]] = []
    unread: list[str] = []
    for region in stack.regions:
        parent = f"projects/{stack.project}/locations/{region}"
        for name in COLLECTIONS:
            for job in _listed(collection(region, name), parent, wanted, name, unread):
                if (job.get("labels") or {}).get(stack.label_key) == stack.label_value \
                        and job.get("state") in RUNNING_STATES:
                    found.append((name, str(job["name"])))
    return list(dict.fromkeys(found)), unread  # a page served again (its token came back) names its jobs again


def _listed(jobs: Any, parent: str, wanted: str, name: str, unread: list[str]) -> Iterator[dict[str, Any]]:
    """Every job of one list, page by page; a page token that repeats or is not text (the list would never end), or
    more than MAX_PAGES pages, stops it, said in `unread`."""
    token: str | None = None
    seen: set[str] = set()
    for number in range(1, MAX_PAGES + 1):
        page = jobs.list(parent=parent, filter=wanted, pageToken=token, fields=list_fields(name)).execute()
        yield from page.get(name) or []
        following = page.get("nextPageToken") or None
        if following is None:
            return
        if not isinstance(following, str) or following in seen:
            unread.append(f"{name}.list of {parent}: page {number}: nextPageToken {following!r} repeats or is not "
                          "text; the list is partial")
            return
        seen.add(following)
        token = following
    unread.append(f"{name}.list of {parent}: more than {MAX_PAGES} pages; the list is partial")


def stop(stack: Stack, notice: Notice, collection: Callable[[str, str], Any]) -> list[str]:
    """Cancel the stack's running jobs when the notice says the budget is spent; the names cancelled. When a list
    could not be read whole, the jobs found are cancelled, then a RuntimeError says which (the run fails, in its
    log)."""
    if not decide(stack, notice):
        return []
    found, unread = running_jobs(stack, collection)
    cancelled = []
    for name, job in found:
        region = job.split("/locations/", 1)[1].split("/", 1)[0]
        collection(region, name).cancel(name=job, body={}).execute()
        cancelled.append(job)
    if unread:
        names = ", ".join(cancelled) or "none"
        raise RuntimeError(f"{'; '.join(unread)}; cancelled the {len(cancelled)} job(s) found: {names}")
    return cancelled


def clients(endpoint: str | None = None) -> Callable[[str, str], Any]:
    """`collection(region, name)`: Vertex AI v1 through google-api-python-client, one client per region (the
    function's service account; anonymous to a loopback endpoint, the emulator)."""
    from googleapiclient.discovery import build

    built: dict[str, Any] = {}

    def collection(region: str, name: str) -> Any:
        if region not in built:
            url = endpoint or f"https://{region}-aiplatform.googleapis.com/"
            credentials = None
            if url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
                from google.auth.credentials import AnonymousCredentials

                credentials = AnonymousCredentials()
            built[region] = build("aiplatform", "v1", static_discovery=True, cache_discovery=False,
                                  client_options={"api_endpoint": url}, credentials=credentials)
        return getattr(built[region].projects().locations(), name)()

    return collection


def message_of(cloud_event: Any) -> Any:
    """The Pub/Sub message of a CloudEvent (`data.message`); Ignored when the event carries none."""
    data = cloud_event.data if hasattr(cloud_event, "data") else \
        cloud_event.get("data") if isinstance(cloud_event, Mapping) else None
    if not isinstance(data, Mapping) or "message" not in data:
        raise Ignored("the event carries no Pub/Sub message")
    return data["message"]


def on_budget(cloud_event: Any) -> None:
    """The entry point: a Pub/Sub CloudEvent (`data.message`) from the stack's budget topic. A message it does not
    act on is logged, one line saying why, and the run ends well (a raise would only fail the run, never retried)."""
    stack = Stack.from_environment(os.environ)
    try:
        notice = notice_of(message_of(cloud_event))
    except Ignored as why:
        print(f"budget stop: message ignored: {why}")
        return
    reason = foreign(stack, notice)
    if reason is not None:
        print(f"budget stop: message ignored: {reason}")
        return
    if not notice.spent:
        return  # the usual message: the month's spend so far, under the budget (several a day): nothing to say
    cancelled = stop(stack, notice, clients(os.environ.get("AIPLATFORM_ENDPOINT")))
    if cancelled:
        print(f"budget {notice.budget}: {notice.cost:.2f} of {notice.amount:.2f} {notice.currency} spent since "
              f"{notice.since}; cancelled {len(cancelled)} job(s): {', '.join(cancelled)}")
