"""Where Google credentials may go: the one judge of an API endpoint override (a stack's `apiEndpoint`,
$GCP_TRAINING_JOBS_API_ENDPOINT, a command's `--endpoint`), and how one is printed.

An endpoint is `https://HOST[:PORT][/PATH]` to one of Google's API hosts, or http(s) to loopback (the emulator, which
gets anonymous credentials). Google's API hosts are the names under `googleapis.com`: the global ones
(`aiplatform.googleapis.com`), the regional ones (`us-central1-aiplatform.googleapis.com`), the regional endpoints
(`aiplatform.us-central1.rep.googleapis.com`), `private.googleapis.com` and `restricted.googleapis.com`, and the
names a Private Service Connect endpoint for Google APIs is given, `SERVICE-ENDPOINT.p.googleapis.com`
(`ALLOWED_SOURCE`). Any other host (a proxy, a custom DNS name or the IP address of a Private Service Connect
endpoint) is taken only when $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS names it: deliberately not a stack config
key, since the stack file is what a pull request changes. An endpoint never carries a user name or a password, and
is printed without one (`shown`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final

#: Google's page naming the DNS names of Private Service Connect endpoints for Google APIs
#: (`storage-vialink1.p.googleapis.com`, `bigtable-adsteam.p.googleapis.com`), read 2026-12-02: "VPC: About
#: accessing Google APIs through endpoints".
ALLOWED_SOURCE: Final = "https://cloud.google.com/vpc/docs/about-accessing-google-apis-endpoints"
#: The domain of Google's API hosts.
GOOGLE_APIS: Final = "googleapis.com"
#: What an endpoint override may be, in every message that refuses one.
ALLOWED: Final = ("https://HOST[:PORT]/PATH where HOST is one of Google's API hosts (*.googleapis.com: global, "
                  "regional REGION-aiplatform.googleapis.com, Private Service Connect *.p.googleapis.com), or "
                  "http(s):// to loopback (127.0.0.1, ::1, localhost: the emulator); another https host only when "
                  "GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS names it")

#: scheme://[userinfo@]host[:port][/path]: a host name, an IPv4 address or a bracketed IPv6 address; no query,
#: fragment or backslash (what one URL parser and another could read as different hosts).
_URL: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?:(?P<userinfo>[^@/\s]*)@)?"
                         r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?"
                         r"(?P<path>/[^\s?#\\@]*)?")
_LABEL: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
#: A host name the allowed-hosts variable may list.
HOST_NAME: Final = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
                              r"|\[[0-9a-f:.]+\]")


def shown(endpoint: str) -> str:
    """The endpoint as printed: without a user name or password (`https://host/`), on one line, at most 200
    characters."""
    found = _URL.match(endpoint or "")
    if found is None:
        return repr(re.sub(r"(?<=://)[^/@\s]*@", "", endpoint or "")[:80])
    start, end = found.span("userinfo") if found["userinfo"] is not None else (0, 0)
    text = endpoint[:start] + endpoint[end + 1:] if end else endpoint
    return re.sub(r"[^\x21-\x7e]", "?", text[:200])


def host(endpoint: str | None) -> str | None:
    """The endpoint's host, lowercase, brackets kept for IPv6 (`[::1]`), or None when it is not a URL."""
    found = _URL.fullmatch(endpoint or "")
    return found["host"].lower() if found else None


def is_loopback(endpoint: str | None) -> bool:
    """Whether the endpoint's host is this machine: `localhost` or a loopback address (127.0.0.0/8, ::1).
    A name that merely starts with 127. (127.0.0.1.example.com) is not."""
    name = host(endpoint) or ""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def is_google_api_host(name: str) -> bool:
    """Whether a host name is one of Google's API hosts: a well formed name under googleapis.com."""
    labels = name.split(".")
    return (name.endswith("." + GOOGLE_APIS) and len(name) <= 253
            and all(_LABEL.fullmatch(label) for label in labels))


def allowed_hosts(text: str | None) -> tuple[str, ...]:
    """The hosts $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS lists: comma- or space-separated, lowercase."""
    return tuple(dict.fromkeys(part.lower() for part in re.split(r"[,\s]+", text or "") if part))


def endpoint_problem(endpoint: str, allowed: Iterable[str] = ()) -> str | None:
    """Why Google credentials must not go to this endpoint (what it is, to follow `ENDPOINT is ...`; ALLOWED says
    what may be), or None when they may: https:// to one of Google's API hosts or to a host `allowed` names, or
    http(s):// to loopback (anonymous credentials). Never the endpoint's user name or password."""
    found = _URL.fullmatch(endpoint or "")
    if found is None or found["scheme"].lower() not in ("http", "https"):
        return "not an http(s) URL"
    if found["userinfo"] is not None:
        return ("a URL with a user name or password (not shown): an endpoint takes none, Google's APIs are called "
                "with Application Default Credentials")
    if is_loopback(endpoint):
        return None
    name = found["host"].lower()
    if found["scheme"].lower() != "https":
        return "not https:// and not loopback: it would carry Google credentials in clear text"
    if is_google_api_host(name) or name in set(allowed):
        return None
    return f"to {name}, which is not one of Google's API hosts: Google credentials would be sent to it"


def refusal(endpoint: str, allowed: Iterable[str] = (), *, named: bool = True) -> str | None:
    """The whole refusal of an endpoint, as every message says it (`https://x.example/ is to x.example, which is
    not one of Google's API hosts ...; allowed: ...`; without the endpoint when not `named`: where the message
    names it already), or None when it is taken."""
    problem = endpoint_problem(endpoint, allowed)
    if problem is None:
        return None
    return f"{shown(endpoint) + ' is ' if named else ''}{problem}; allowed: {ALLOWED}"
