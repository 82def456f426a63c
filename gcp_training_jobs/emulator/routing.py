"""Routing of API paths to handlers: the Route table entries, the request a handler sees, and the
create / list / get / cancel routes every job collection has, served by the shared job store."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gcp_training_jobs.emulator.errors import invalid
from gcp_training_jobs.emulator.jobs import Vocabulary
from gcp_training_jobs.emulator.state import EmulatorState

_SEGMENTS = {"project": "(?P<p>[^/:]+)", "location": "(?P<l>[^/:]+)"}
#: The id segment after a collection path.
ITEM = r"/(?P<j>[^/:]+)"


def resource_pattern(template: str) -> str:
    """The anchored pattern of a resource path such as "projects/{project}/locations/{location}"."""
    return "^/v1/" + template.format(**_SEGMENTS)


def collection_path(vocab: Vocabulary) -> str:
    """The pattern of an API's job collection, e.g. ^/v1/projects/(?P<p>...)/jobs."""
    return f"{resource_pattern(vocab.parent)}/{vocab.collection}"


@dataclass
class Request:
    """One routed API call: the path parameters, the query (one value per name) and the JSON body."""

    params: dict[str, str]
    query: dict[str, Any] = field(default_factory=dict)
    body: Any = None

    @property
    def project(self) -> str:
        return self.params["p"]

    @property
    def location(self) -> str:
        """The path's location ("" for ml, whose paths have none)."""
        return self.params.get("l") or ""

    @property
    def job(self) -> str:
        return self.params["j"]

    def page_size(self) -> int | None:
        raw = self.query.get("pageSize")
        if raw is None or raw == "":
            return None
        try:
            return int(str(raw))
        except (TypeError, ValueError):
            raise invalid(f"Invalid value at 'page_size' (TYPE_INT32), \"{raw}\"", "page_size") from None


Handler = Callable[[EmulatorState, Request], Any]


@dataclass(frozen=True)
class Route:
    """HTTP verb + anchored path pattern -> the API method name (request log, faults) and its handler; and the
    (API, discovery schema) of its answer, whose int64 fields are sent as strings and enums as numbers when asked
    (see `proto_json`)."""

    verb: str
    pattern: re.Pattern[str]
    method: str
    handler: Handler
    response: tuple[str, str] | None = None


def job_routes(vocab: Vocabulary, create: Handler) -> list[Route]:
    """create, list, get and cancel of an API's job collection (create is the API's own)."""
    collection, where = vocab.collection, collection_path(vocab)

    def list_jobs(state: EmulatorState, r: Request) -> Any:
        token, text = r.query.get("pageToken") or None, r.query.get("filter") or None
        return state.list_jobs(vocab, r.project, r.location, r.page_size(), token, text)

    one = (vocab.api, vocab.schema) if vocab.schema else None
    listed = (vocab.api, vocab.list_schema) if vocab.list_schema else None
    return [
        Route("POST", re.compile(where + "$"), f"{collection}.create", create, one),
        Route("GET", re.compile(where + "$"), f"{collection}.list", list_jobs, listed),
        Route(
            "GET",
            re.compile(where + ITEM + "$"),
            f"{collection}.get",
            lambda state, r: state.get_job(vocab, r.project, r.location, r.job),
            one,
        ),
        Route(
            "POST",
            re.compile(where + ITEM + ":cancel$"),
            f"{collection}.cancel",
            lambda state, r: state.cancel_job(vocab, r.project, r.location, r.job),
        ),
    ]


def route(routes: list[Route], http_method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The route serving `http_method path`, with the path's parameters; None when none does."""
    for candidate in routes:
        match = candidate.pattern.match(path)
        if match and candidate.verb == http_method:
            return candidate, match.groupdict()
    return None
