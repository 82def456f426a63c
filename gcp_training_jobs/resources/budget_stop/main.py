"""Stops a stack's Vertex AI jobs once its month's spend reaches its budget: a Cloud Run function (Python runtime)
that the stack's budget notifies through a Pub/Sub topic, as Google's "Control resource usage with notifications"
(https://cloud.google.com/billing/docs/how-to/control-usage) does for Compute Engine.

Google's notification (https://cloud.google.com/billing/docs/how-to/budgets-programmatic-notifications): the
Pub/Sub message's `data` is base64 JSON with `budgetDisplayName`, `costAmount`, `costIntervalStart`,
`budgetAmount`, `budgetAmountType`, `alertThresholdExceeded` and `currencyCode`; it comes several times a day,
whatever the spend. The function acts only on its own budget's message (`budgetDisplayName`) once `costAmount`
reaches `budgetAmount`: it lists the custom and tuning jobs carrying the stack's `pulumi-stack` label in the stack's
regions (every page; the label checked again on each job) and cancels those queued, pending or running. A job
already cancelling or over is left alone, so a second message cancels nothing again, and a job without the stack's
label (another stack's) is never touched. A list whose page token repeats or is not text, or that runs past
MAX_PAGES pages, is not followed on: the jobs found are cancelled, then the run fails saying which list is partial.

Only the Cloud Run functions Python runtime and google-api-python-client (requirements.txt) are used: this file
is uploaded on its own. Its configuration is the function's environment: STACK_LABEL (`pulumi-stack=VALUE`),
PROJECT, REGIONS (comma-separated), BUDGET_DISPLAY_NAME, and AIPLATFORM_ENDPOINT (a test's loopback emulator;
default: each region's Vertex AI endpoint).
"""

from __future__ import annotations

import base64
import json
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


@dataclass(frozen=True)
class Notice:
    """A budget notification's figures."""

    budget: str
    cost: float
    amount: float
    currency: str
    since: str

    @property
    def spent(self) -> bool:
        """The month's spend has reached the budget (`costAmount` >= `budgetAmount`)."""
        return self.cost >= self.amount


def notice_of(message: Mapping[str, Any]) -> Notice:
    """The figures of a Pub/Sub message (`{"data": base64 JSON, "attributes": ...}`) as the Budget API sends it."""
    data = json.loads(base64.b64decode(str(message.get("data") or "")).decode("utf-8") or "{}")
    return Notice(str(data.get("budgetDisplayName", "")), float(data.get("costAmount", 0.0)),
                  float(data.get("budgetAmount", 0.0)), str(data.get("currencyCode", "")),
                  str(data.get("costIntervalStart", "")))


@dataclass(frozen=True)
class Stack:
    """Whose jobs the function stops: the stack's label, its project, regions and budget's display name."""

    label_key: str
    label_value: str
    project: str
    regions: tuple[str, ...]
    budget: str

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Stack:
        key, _, value = env["STACK_LABEL"].partition("=")
        regions = tuple(r.strip() for r in env["REGIONS"].split(",") if r.strip())
        return cls(key, value, env["PROJECT"], regions, env.get("BUDGET_DISPLAY_NAME", ""))


def decide(stack: Stack, notice: Notice) -> bool:
    """Whether this message asks to stop the stack's jobs: its own budget's, and spent."""
    return (not stack.budget or notice.budget == stack.budget) and notice.spent


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
        page = jobs.list(parent=parent, filter=wanted, pageToken=token).execute()
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


def on_budget(cloud_event: Any) -> None:
    """The entry point: a Pub/Sub CloudEvent (`data.message`) from the stack's budget topic."""
    data = cloud_event.data if hasattr(cloud_event, "data") else cloud_event["data"]
    stack = Stack.from_environment(os.environ)
    notice = notice_of(data["message"])
    cancelled = stop(stack, notice, clients(os.environ.get("AIPLATFORM_ENDPOINT")))
    if cancelled:
        print(f"budget {notice.budget}: {notice.cost:.2f} of {notice.amount:.2f} {notice.currency} spent since "
              f"{notice.since}; cancelled {len(cancelled)} job(s): {', '.join(cancelled)}")
