"""What a credential looks like: the public patterns of secret scanners, so that a value shaped like a known
credential is never sent to Google's plain-text fields (labels are refused; args and container env warned of) and
never printed by this project: `masked_text` replaces each one in a text by `<KIND, not shown>`, and `masked` walks a
job's data (any depth) into its masked copy and where each credential was found, the one detector of the warnings
(rules.identity.credential_warnings), the review's output and the provider's messages.

Each pattern is the `regex` of the gitleaks rule of the same id (config/gitleaks.toml), written in Python's syntax:
a trailing delimiter group `(?:[\\x60'"\\s;]|\\\\[nr]|$)` becomes a lookahead `(?![A-Za-z0-9])`, so a match is found
inside a longer value; for `private-key` only the rule's opening line is kept (a key's header alone is refused).
Plain hexadecimal strings (git SHAs, content hashes) match none of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.source import Source

SOURCE: Final = Source(
    title="gitleaks default configuration, config/gitleaks.toml (rules: id, description, regex)",
    url="https://github.com/gitleaks/gitleaks/blob/b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b/config/gitleaks.toml",
    read=date(2026, 11, 25),
    note="gitleaks/gitleaks @ b58d3f102cf3 (2026-07-22); MIT licence; only the patterns are transcribed",
)


@dataclass(frozen=True)
class Credential:
    """One kind of credential: its gitleaks rule id, what it is, its pattern, and the texts (lowercase) one of which
    every match contains: a value holding none of them is told apart without a regex (nearly every value)."""

    rule: str
    what: str
    regex: str
    anchors: tuple[str, ...]
    #: What a mask covers when more than the match is secret (a private key: its header to its footer, or the end).
    extent: str = ""

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex)  # compiled at first use, then from re's own cache

    @property
    def shown(self) -> str:
        """What stands in for one, in every output: `<Hugging Face access token, not shown>`."""
        return f"<{re.sub(r'^(?:an?) ', '', self.what)}, not shown>"

    def named(self) -> str:
        """How a message names it, without the value: `a GitHub personal access token (gitleaks rule github-pat)`."""
        return f"{self.what} (gitleaks rule {self.rule})"


def _credential(rule: str, what: str, regex: str, *anchors: str, extent: str = "") -> Credential:
    return Credential(rule, what, regex, anchors, extent)


#: The credentials recognised, each from the gitleaks rule named (SOURCE).
CREDENTIALS: Final = (
    _credential("aws-access-token", "an AWS access key id",
                r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b", "a3t", "akia", "asia", "abia", "acca"),
    _credential("gcp-api-key", "a Google Cloud API key", r"\bAIza[\w-]{35}(?![A-Za-z0-9])", "aiza"),
    _credential("github-pat", "a GitHub personal access token", r"ghp_[0-9a-zA-Z]{36}", "ghp_"),
    _credential("github-oauth", "a GitHub OAuth access token", r"gho_[0-9a-zA-Z]{36}", "gho_"),
    _credential("github-app-token", "a GitHub App token", r"(?:ghu|ghs)_[0-9a-zA-Z]{36}", "ghu_", "ghs_"),
    _credential("github-fine-grained-pat", "a GitHub fine-grained personal access token", r"github_pat_\w{82}",
                "github_pat_"),
    _credential("gitlab-pat", "a GitLab personal access token", r"glpat-[\w-]{20}", "glpat-"),
    _credential("huggingface-access-token", "a Hugging Face access token",
                r"\bhf_(?i:[a-z]{34})(?![A-Za-z0-9])", "hf_"),
    _credential("slack-bot-token", "a Slack bot token", r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*", "xoxb-"),
    _credential("slack-user-token", "a Slack user token", r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}",
                "xoxp-", "xoxe-"),
    _credential("slack-app-token", "a Slack app-level token", r"(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-"),
    _credential("openai-api-key", "an OpenAI API key",
                r"\bsk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
                r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|\bsk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}", "sk-"),
    _credential("anthropic-api-key", "an Anthropic API key", r"\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA", "sk-ant-"),
    _credential("stripe-access-token", "a Stripe access token",
                r"\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}(?![A-Za-z0-9])", "sk_", "rk_"),
    _credential("npm-access-token", "an npm access token", r"(?i)\bnpm_[a-z0-9]{36}(?![A-Za-z0-9])", "npm_"),
    _credential("private-key", "a private key", r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
                "-----begin", extent=r"(?is)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----.*?"
                                     r"(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
)

#: Where a recognised credential belongs instead of a plain-text field of the job.
INSTEAD: Final = ("keep it in Secret Manager and give the job the secret's name, e.g. an environment variable "
                  "TOKEN_SECRET=projects/PROJECT/secrets/NAME/versions/latest that the trainer reads with the job's "
                  "service account (roles/secretmanager.secretAccessor)")


def _prefix(rule: str, what: str, regex: str, *anchors: str) -> Credential:
    """A credential found by its prefix where a word begins: a value's start, after `=`, a space or a quote."""
    return _credential(rule, what, r"(?<![\w-])" + regex, *anchors)


#: A word that begins with a credential's published prefix (the fixed start of the gitleaks rule named) and goes on
#: with at least 16 characters of a token's alphabet, a digit among them: a test or truncated token that the full
#: patterns above miss is still not sent or shown, whether a value begins with it or holds it (`--token=hf_...`), so a
#: text made of values (a line of args) is masked as each value is. Derived from the rules above; "sk-learn" or
#: "hf_hub" stay allowed.
PREFIXES: Final = (
    _prefix("slack-bot-token", "a Slack bot token (its prefix xoxb-)", r"xoxb-(?=[\w-]*\d)[\w-]{16,}", "xoxb-"),
    _prefix("slack-user-token", "a Slack user token (its prefix xoxp-)", r"xox[pe]-(?=[\w-]*\d)[\w-]{16,}",
            "xoxp-", "xoxe-"),
    _prefix("github-pat", "a GitHub token (its prefix ghp_, gho_, ghu_, ghs_ or ghr_)",
            r"gh[pousr]_(?=\w*\d)\w{16,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _prefix("github-fine-grained-pat", "a GitHub fine-grained token (its prefix github_pat_)",
            r"github_pat_(?=\w*\d)\w{16,}", "github_pat_"),
    _prefix("huggingface-access-token", "a Hugging Face token (its prefix hf_)", r"hf_(?=\w*\d)\w{16,}", "hf_"),
    _prefix("aws-access-token", "an AWS access key id (its prefix AKIA)", r"(?i:akia)(?=\w*\d)\w{12,}", "akia"),
    _prefix("openai-api-key", "an OpenAI API key (its prefix sk-)", r"sk-(?=[\w-]*\d)[\w-]{16,}", "sk-"),
)


#: Every credential's anchors, one search: a value (lowercased) that holds none of them holds no credential.
_ANCHORS: Final = re.compile("|".join(map(re.escape, sorted({a for c in (*CREDENTIALS, *PREFIXES)
                                                              for a in c.anchors}))))


def may_hold_credential(text: str) -> bool:
    """False when no value written into `text` (e.g. a job's repr: its anchors are never escaped there) can be a
    credential; True means look value by value."""
    return _ANCHORS.search(text.lower()) is not None


def _kinds_in(text: str) -> list[Credential]:
    """The kinds whose anchors `text` holds, full patterns first (each to be searched for: one anchor, `asia` in a
    region's name, leaves one pattern to try, not all)."""
    if not may_hold_credential(text):
        return []
    lower = text.lower()
    return [c for c in (*CREDENTIALS, *PREFIXES) if any(a in lower for a in c.anchors)]


def credential_in(text: str) -> Credential | None:
    """The first kind of credential `text` holds (a full pattern, or a word with a known prefix), or None."""
    return next((c for c in _kinds_in(text) if c.pattern.search(text)), None)


def masked_text(text: str) -> str:
    """`text` with each credential credential_in finds (every match of a full pattern, every word with a known prefix)
    replaced by `<KIND, not shown>`: `--hf-token=<Hugging Face access token, not shown>`. A text made of values (a line
    of args, a JSON document) is masked as each of its values is."""
    for kind in _kinds_in(text):
        if kind.pattern.search(text):
            text = re.sub(kind.extent or kind.regex, kind.shown.replace("\\", r"\\"), text)
    return text


@dataclass(frozen=True)
class Found:
    """Where a credential was found in a job's data (`workerPoolSpecs[0].containerSpec.args[1]`) and its kind; never
    the value. `keys`: the mapping keys on the way (a label's credential is refused by its own rule)."""

    path: str
    kind: Credential
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Masked:
    """A job's data with each text that holds a credential concealed (`masked_text`, or what the caller chose: a
    Pulumi secret), and where each was found, by path."""

    value: Any
    found: tuple[Found, ...]


def masked(data: Any, conceal: Callable[[str], Any] = masked_text) -> Masked:
    """The one walk over a job's data (args, command, env values, a tuning trial's spec: mappings and lists at any
    depth): a copy where each text holding a credential is `conceal(text)`, and where each was found. Data that
    holds none is returned as it is (nearly every job is told by one search over its repr, with no walk)."""
    found = found_in(data)
    return Masked(_walk(data, conceal)[0], found) if found else Masked(data, ())


def found_in(data: Any) -> tuple[Found, ...]:
    """Where a job's data holds a credential (`masked`'s walk, without the copy), by path."""
    if not may_hold_credential(repr(data)):
        return ()
    return tuple(sorted(_walk(data, None)[1], key=lambda f: f.path))


def _walk(data: Any, conceal: Callable[[str], Any] | None) -> tuple[Any, list[Found]]:
    """The data (copied, each credential concealed, when `conceal` is given) and where each credential is. Iterative:
    no depth is too deep."""
    found: list[Found] = []
    steps: list[tuple[int, Any]] = [(-1, "")]  # (parent's step, key or index): a path is spelled only when needed
    root: list[Any] = [data]
    stack: list[tuple[Any, Any, int, Any]] = [(root, 0, 0, data)]  # (holder, slot in it, step, value)
    while stack:
        holder, slot, at, value = stack.pop()
        if isinstance(value, Mapping | list | tuple):
            copy: Any = None
            if conceal:  # the copy, filled in as its items are walked
                copy = holder[slot] = dict(value) if isinstance(value, Mapping) else list(value)
            for key, item in value.items() if isinstance(value, Mapping) else enumerate(value):
                steps.append((at, key))
                stack.append((copy, key, len(steps) - 1, item))
        elif isinstance(value, str) and (kind := credential_in(value)) is not None:
            if conceal:
                holder[slot] = conceal(value)
            path, keys = _path(steps, at)
            found.append(Found(path, kind, keys))
    return root[0], found


def _path(steps: list[tuple[int, Any]], at: int) -> tuple[str, tuple[str, ...]]:
    """The field path of value `at` (`a.b[0].c`) and the mapping keys on it, from the steps `masked` kept."""
    parts: list[Any] = []
    while at > 0:
        at, key = steps[at]
        parts.append(key)
    parts.reverse()
    path = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in parts).lstrip(".")
    return path, tuple(str(key) for key in parts if not isinstance(key, int))
