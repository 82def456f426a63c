"""What a credential looks like: the public patterns of secret scanners, so that a value shaped like a known
credential is never sent to Google's plain-text fields (labels are refused; args and container env warned of) and
never printed by this project: `masked_text` replaces each one in a text by `<KIND, not shown>`, and `masked` walks a
job's data (any depth) into its masked copy and where each credential was found, the one detector of the warnings
(rules.identity.credential_warnings), the review's output and the provider's messages.

Each pattern is the `regex` of the gitleaks rule of the same id (config/gitleaks.toml), written in Python's syntax:
a trailing delimiter group `(?:[\\x60'"\\s;]|\\\\[nr]|$)` becomes a lookahead `(?![A-Za-z0-9])`, so a match is found
inside a longer value; for `private-key` only the rule's opening line is kept (a key's header alone is refused).
Plain hexadecimal strings (git SHAs, content hashes) match none of them.

A value is also a credential by its name (`NAMED`, after the gitleaks rule `generic-api-key`): an environment
variable, a flag or a key named as one (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, as `WANDB_API_KEY`,
`--hf-token`, `db_password`) whose value looks like one (the rule's secret: 10 to 150 characters of `[\\w.=-]`, or
base64, with a Shannon entropy of 3.5 bits or more; or 32 hexadecimal digits or more, a Weights & Biases key's 40),
found where the name stands beside it: `NAME=VALUE` in a text, an env entry's `name` and `value`, a flag and the
argument after it, a mapping's key and its value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
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
    """One kind of credential: its gitleaks rule id, what it is, its pattern, and the texts one of which every match
    contains: a value holding none of them is told apart without a regex (nearly every value)."""

    rule: str
    what: str
    regex: str
    #: As the pattern spells them where it is case-sensitive (`ASIA`: `asia-east1` holds none), else lowercase.
    anchors: tuple[str, ...]
    #: What a mask covers when more than the match is secret (a private key: its header to its footer, or the end).
    extent: str = ""
    #: Whether a match holds an anchor as written (the pattern is case-sensitive there), or in any case.
    cased: bool = True
    #: Whose rule it is: gitleaks' (SOURCE), else this project's, after the source EXTRA_SOURCES names.
    gitleaks: bool = True

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex)  # compiled at first use, then from re's own cache

    @property
    def shown(self) -> str:
        """What stands in for one, in every output: `<Hugging Face access token, not shown>`."""
        return f"<{re.sub(r'^(?:an?) ', '', self.what)}, not shown>"

    def named(self) -> str:
        """How a message names it, without the value: `a GitHub personal access token (gitleaks rule github-pat)`."""
        return f"{self.what} ({'gitleaks ' if self.gitleaks else ''}rule {self.rule})"


def _credential(rule: str, what: str, regex: str, *anchors: str, extent: str = "", cased: bool = True,
                gitleaks: bool = True) -> Credential:
    return Credential(rule, what, regex, anchors, extent, cased, gitleaks)


#: The credentials recognised, each from the gitleaks rule named (SOURCE).
CREDENTIALS: Final = (
    _credential("aws-access-token", "an AWS access key id",
                r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b", "A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
    _credential("gcp-api-key", "a Google Cloud API key", r"\bAIza[\w-]{35}(?![A-Za-z0-9])", "AIza"),
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
    _credential("slack-app-token", "a Slack app-level token", r"(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-",
                cased=False),
    _credential("openai-api-key", "an OpenAI API key",
                r"\bsk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
                r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|\bsk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}", "sk-"),
    _credential("anthropic-api-key", "an Anthropic API key", r"\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA", "sk-ant-"),
    _credential("stripe-access-token", "a Stripe access token",
                r"\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}(?![A-Za-z0-9])", "sk_", "rk_"),
    _credential("npm-access-token", "an npm access token", r"(?i)\bnpm_[a-z0-9]{36}(?![A-Za-z0-9])", "npm_",
                cased=False),
    _credential("slack-webhook-url", "a Slack webhook URL",
                r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}",
                "hooks.slack.com", cased=False),
    _credential("jwt", "a JSON Web Token",
                r"\bey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?", ".ey"),
    _credential("private-key", "a private key", r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
                "-----begin", cased=False, extent=r"(?is)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----.*?"
                                     r"(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
)

#: Where the kinds no gitleaks rule names come from (EXTRA, BASE64).
EXTRA_SOURCES: Final = (
    Source(title="detect-secrets 1.5.0, detect_secrets/plugins/basic_auth.py (BasicAuthDetector)",
           url="https://github.com/Yelp/detect-secrets/blob/v1.5.0/detect_secrets/plugins/basic_auth.py",
           read=date(2026, 12, 2), note="Yelp/detect-secrets, tag v1.5.0; Apache-2.0; the pattern only"),
    Source(title="Google Identity: Using OAuth 2.0 to Access Google APIs (access tokens sent as `Bearer ya29...`)",
           url="https://developers.google.com/identity/protocols/oauth2", read=date(2026, 12, 2),
           note="the ya29. prefix of Google's OAuth 2.0 access tokens"),
)
#: Credentials no gitleaks rule names, each from the public source it cites (EXTRA_SOURCES).
EXTRA: Final = (
    # A Google OAuth 2.0 access token: "ya29." and the token (Google's OAuth 2.0 guide shows them so, e.g.
    # `Authorization: Bearer ya29.a0...`; the prefix of credsweeper's "Google OAuth Access Token" rule).
    _credential("google-oauth-access-token", "a Google OAuth access token", r"(?<![\w.-])ya29\.[\w-]{20,}", "ya29.",
                gitleaks=False),
    # A user name and password in a URL (`https://user:pass@host`): detect-secrets' BasicAuthDetector, its password
    # not a reference (`${VAR}`, `$VAR`, `%VAR%`).
    _credential("basic-auth-url", "a password in a URL",
                r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@'\"]{1,100}:(?![$%{])[^\s/?#@'\"]{1,200}@", "://",
                extent=r"(?i)(?<=://)[^\s:/?#@'\"]{1,100}:(?![$%{])[^\s/?#@'\"]{1,200}(?=@)", gitleaks=False),
)

#: Where a recognised credential belongs instead of a plain-text field of the job.
INSTEAD: Final = ("keep it in Secret Manager and give the job the secret's name, e.g. an environment variable "
                  "TOKEN_SECRET=projects/PROJECT/secrets/NAME/versions/latest that the trainer reads with the job's "
                  "service account (roles/secretmanager.secretAccessor)")


def _prefix(rule: str, what: str, regex: str, *anchors: str, cased: bool = True) -> Credential:
    """A credential found by its prefix where a word begins: a value's start, after `=`, a space or a quote."""
    return _credential(rule, what, r"(?<![\w-])" + regex, *anchors, cased=cased)


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
    _prefix("aws-access-token", "an AWS access key id (its prefix AKIA)", r"(?i:akia)(?=\w*\d)\w{12,}", "akia",
            cased=False),
    _prefix("openai-api-key", "an OpenAI API key (its prefix sk-)", r"sk-(?=[\w-]*\d)[\w-]{16,}", "sk-"),
)


#: A name that says its value is a credential: `*_API_KEY`, `*_TOKEN`, `*_SECRET` (and `*_SECRET_KEY`), `*PASSWORD*`
#: (`PASSWD`), any case, `-` or `_` between words, as an environment variable or a flag spells it (the keywords of
#: gitleaks' generic-api-key, narrowed to a name's end, so `--tokenizer` or `max_tokens` stay plain).
NAME: Final = re.compile(r"(?i)(?:^|[^a-z0-9])(?:api[_-]?key|token|secret(?:[_-]?key)?|key)$|passw(?:or)?d|credential"
                         r"|secret[_-]?access|^pwd$")
#: A name that says its value is a password: any value but a reference (`$VAR`, `${VAR}`, a path, a Secret Manager
#: name) is one, whatever characters it holds (`--password 'p@ss w!rd#'`).
PASSWORD: Final = re.compile(r"(?i)passw(?:or)?d|^pwd$")
#: What a password given by name may be without being one: a reference to where it is kept (`$VAR`, `${VAR}`,
#: `%VAR%`, a path, a Secret Manager name), a flag, or a placeholder (one character repeated, as gitleaks' allowlist).
_REFERENCE: Final = re.compile(r"[$%{<-]|/|projects/|file:|gs://|(.)\1*$|(?i:true|false|none|null|changeme)$")
#: A value that looks like a credential: the generic-api-key rule's secret (`[\w.=-]{10,150}`, or base64 of 12
#: characters or more), not a Secret Manager name (the place a credential belongs, INSTEAD).
_VALUE: Final = re.compile(r"(?:[\w.=-]{10,150}|[A-Za-z0-9][A-Za-z0-9+/]{11,}={0,3})")
_HEX_KEY: Final = re.compile(r"[0-9a-fA-F]{32,}")
_SECRET_MANAGER: Final = re.compile(r"projects/[^/]+/secrets/")
#: The rule's least entropy, in bits per character.
ENTROPY: Final = 3.5
#: `NAME=VALUE` (or `NAME: VALUE`) inside a text: a flag's (`--wandb_api_key=...`), a variable's, a line's.
_NAMED_IN_TEXT: Final = re.compile(r"(?P<name>[A-Za-z_][\w.-]{0,80})(?P<sep>[\s'\"]{0,3}(?:=|:)[\s'\"=]{0,5})"
                                   r"(?P<value>(?!-)[^\s'\"]{6,200})")
_PLAIN_VALUE: Final = re.compile(r"[\w.=+/-]{10,150}")

#: A value named as a credential, after the gitleaks rule generic-api-key (SOURCE).
NAMED: Final = _credential("generic-api-key", "a value named as a credential", _NAMED_IN_TEXT.pattern,
                           "key", "token", "secret", "passw", "credential", "pwd", cased=False)


def _entropy(text: str) -> float:
    """Shannon entropy of `text`, in bits per character (gitleaks' `entropy`)."""
    return -sum(n / len(text) * math.log2(n / len(text)) for n in Counter(text).values())


def named_credential(name: str, value: str) -> bool:
    """Whether `value`, given under `name` (an env variable's, a flag's, a key's), is a credential by its name: the name
    says so (NAME) and the value looks like one (the generic rule's secret with its entropy, or a long hex key)."""
    name = name.lstrip("-")
    if not name or NAME.search(name) is None or _SECRET_MANAGER.match(value):
        return False
    if PASSWORD.search(name) and 6 <= len(value) <= 200 and not value.isspace() and not _REFERENCE.match(value):
        return True
    return (_HEX_KEY.fullmatch(value) is not None
            or (_VALUE.fullmatch(value) is not None and _entropy(value) >= ENTROPY))


def _named_in(text: str) -> list[tuple[int, int]]:
    """Where each value of a `NAME=VALUE` in `text` that is a credential by its name is: a password's up to the next
    space or quote, any other's the generic rule's secret it begins with."""
    spans = []
    for m in _NAMED_IN_TEXT.finditer(text):
        value = m["value"] if PASSWORD.search(m["name"]) else (_PLAIN_VALUE.match(m["value"]) or [""])[0]
        if value and named_credential(m["name"], value):
            spans.append((m.start("value"), m.start("value") + len(value)))
    return spans


def _one_of(words: set[str]) -> str:
    """A regex matching any of `words`, as a trie (`s(?:ecret|k(?:-|_))`): re tries the alternatives of a plain
    `a|b|c` one by one at each place, the trie's only where their first letters agree (half the time of the plain
    alternation on a job's text, benchmarks/validate_bench.py). A word that another begins with stands for both,
    as any search for either finds it."""
    if "" in words:
        return ""
    firsts = sorted({word[0] for word in words})
    branches = [re.escape(first) + _one_of({word[1:] for word in words if word[0] == first}) for first in firsts]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


_KINDS: Final = (*CREDENTIALS, *EXTRA, *PREFIXES, NAMED)
#: Every credential's anchors, two searches: a value that holds none of the cased ones as written and none of the
#: others in any case holds no credential.
_CASED: Final = re.compile(_one_of({a for c in _KINDS if c.cased for a in c.anchors}))
_UNCASED: Final = re.compile(_one_of({a for c in _KINDS if not c.cased for a in c.anchors}))


#: A credential wrapped in base64 (`Z2hwX...`, a token or `user:password` encoded): a run of base64 of 24 characters
#: or more with an upper-case letter, a lower-case one and a digit (a hex digest or a git hash has no upper case),
#: whose decoding is text holding a credential of a kind above.
BASE64: Final = _credential("base64-credential", "a base64-encoded credential",
                            r"(?<![\w+/-])[\w+/-]{24,}={0,2}", gitleaks=False)
_BASE64_RUN: Final = re.compile(BASE64.regex)


def _base64_runs(text: str) -> list[re.Match[str]]:
    """The runs of base64 in `text` that may wrap a credential: mixed case and a digit (BASE64)."""
    return [m for m in _BASE64_RUN.finditer(text) if not m[0].islower() and not m[0].isupper()
            and any(ch.isdigit() for ch in m[0])]


def _wrapped(text: str) -> list[tuple[int, int]]:
    """Where `text` holds base64 whose decoding holds a credential (BASE64)."""
    import base64
    import binascii

    spans = []
    for m in _base64_runs(text):
        run = m[0].rstrip("=")
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_" if "-" in run or "_" in run
                                       else None, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if decoded.isprintable() and _direct(decoded) is not None:
            spans.append(m.span())
    return spans


def may_hold_credential(text: str) -> bool:
    """False when no value written into `text` (e.g. a job's repr: its anchors are never escaped there) can be a
    credential; True means look value by value."""
    return (_CASED.search(text) is not None or _UNCASED.search(text.lower()) is not None
            or bool(_base64_runs(text)))


def _kinds_in(text: str) -> list[Credential]:
    """The kinds whose anchors `text` holds, full patterns first (each to be searched for: one anchor, `key` in a
    flag's name, leaves one pattern to try, not all)."""
    if not may_hold_credential(text):
        return []
    lower = text.lower()
    return [c for c in _KINDS if any(a in (text if c.cased else lower) for a in c.anchors)]


def credential_in(text: str, name: str = "") -> Credential | None:
    """The first kind of credential `text` holds (a full pattern, a word with a known prefix, a `NAME=VALUE` named as
    one), or None; `name`: what `text` is given under (an env variable's name, the flag before it), if anything."""
    found = _direct(text, name)
    return found or (BASE64 if _wrapped(text) else None)


def _direct(text: str, name: str = "") -> Credential | None:
    """credential_in without looking inside base64."""
    shaped = next((c for c in _kinds_in(text) if c.pattern.search(text) and (c is not NAMED or _named_in(text))), None)
    return shaped or (NAMED if name and named_credential(name, text) else None)


def masked_text(text: str) -> str:
    """`text` with each credential credential_in finds (every match of a full pattern, every word with a known prefix)
    replaced by `<KIND, not shown>`: `--hf-token=<Hugging Face access token, not shown>`. A text made of values (a line
    of args, a JSON document) is masked as each of its values is."""
    for kind in _kinds_in(text):
        if kind is NAMED:  # the value alone, its name kept: `--wandb_api_key=<value named as a credential, ...>`
            for start, end in reversed(_named_in(text)):
                text = text[:start] + kind.shown + text[end:]
        elif kind.pattern.search(text):
            text = re.sub(kind.extent or kind.regex, kind.shown.replace("\\", r"\\"), text)
    if len(text) >= 24:
        for start, end in reversed(_wrapped(text)):
            text = text[:start] + BASE64.shown + text[end:]
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


def masked(data: Any, conceal: Callable[[str], Any] | None = None) -> Masked:
    """The one walk over a job's data (args, command, env values, a tuning trial's spec: mappings and lists at any
    depth): a copy where each text holding a credential is `conceal(text)` (by default `masked_text`, and a value that
    is a credential by the name it is given under masked whole), and where each was found. Data that holds none is
    returned as it is (nearly every job is told by one search over its repr, with no walk)."""
    found = found_in(data)
    return Masked(_walk(data, conceal or _masked_default)[0], found) if found else Masked(data, ())


def _masked_default(text: str) -> str:
    """masked's default concealment (`_walk` tells it apart: a value named as a credential is masked whole)."""
    return masked_text(text)


def found_in(data: Any) -> tuple[Found, ...]:
    """Where a job's data holds a credential (`masked`'s walk, without the copy), by path."""
    if not may_hold_credential(repr(data)):
        return ()
    return tuple(sorted(_walk(data, None)[1], key=lambda f: f.path))


def _names(value: Mapping[Any, Any] | list[Any] | tuple[Any, ...]) -> list[tuple[Any, Any, str]]:
    """Each item of a mapping or list with the name it is given under: an env entry's `value` its `name`, a mapping's
    value its key, an argument the flag before it (`["--wandb-api-key", VALUE]`)."""
    if isinstance(value, Mapping):
        entry = value.get("name") if isinstance(value.get("name"), str) else None
        return [(key, item, entry if key == "value" and entry else str(key)) for key, item in value.items()]
    return [(index, item, before if isinstance(before, str) and before.startswith("-") and "=" not in before else "")
            for index, (before, item) in enumerate(zip([None, *value], value, strict=False))]


def _walk(data: Any, conceal: Callable[[str], Any] | None) -> tuple[Any, list[Found]]:
    """The data (copied, each credential concealed, when `conceal` is given) and where each credential is. Iterative:
    no depth is too deep."""
    found: list[Found] = []
    steps: list[tuple[int, Any]] = [(-1, "")]  # (parent's step, key or index): a path is spelled only when needed
    root: list[Any] = [data]
    stack: list[tuple[Any, Any, int, Any, str]] = [(root, 0, 0, data, "")]  # (holder, slot, step, value, its name)
    while stack:
        holder, slot, at, value, name = stack.pop()
        if isinstance(value, Mapping | list | tuple):
            copy: Any = None
            if conceal:  # the copy, filled in as its items are walked
                copy = holder[slot] = dict(value) if isinstance(value, Mapping) else list(value)
            for key, item, named in _names(value):
                steps.append((at, key))
                stack.append((copy, key, len(steps) - 1, item, named))
        elif isinstance(value, str) and (kind := credential_in(value, name)) is not None:
            if conceal is _masked_default:
                shown = masked_text(value)
                holder[slot] = kind.shown if shown == value else shown  # named as one: masked whole
            elif conceal:
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
