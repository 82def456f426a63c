"""What a credential looks like: the public patterns of secret scanners, so that a value shaped like a known
credential is never sent to Google's plain-text fields (labels are refused; args and container env warned of) and
never printed in full by a message of this project.

Each pattern is the `regex` of the gitleaks rule of the same id (config/gitleaks.toml), written in Python's syntax:
a trailing delimiter group `(?:[\\x60'"\\s;]|\\\\[nr]|$)` becomes a lookahead `(?![A-Za-z0-9])`, so a match is found
inside a longer value; for `private-key` only the rule's opening line is kept (a key's header alone is refused).
Plain hexadecimal strings (git SHAs, content hashes) match none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Final

from components.jobspec.catalog.source import Source

SOURCE: Final = Source(
    title="gitleaks default configuration, config/gitleaks.toml (rules: id, description, regex)",
    url="https://github.com/gitleaks/gitleaks/blob/b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b/config/gitleaks.toml",
    read=date(2026, 11, 25),
    note="gitleaks/gitleaks @ b58d3f102cf3 (2026-07-22); MIT licence; only the patterns are transcribed",
)


@dataclass(frozen=True)
class Credential:
    """One kind of credential: its gitleaks rule id, what it is, and its pattern."""

    rule: str
    what: str
    pattern: re.Pattern[str]

    def named(self) -> str:
        """How a message names it, without the value: `a GitHub personal access token (gitleaks rule github-pat)`."""
        return f"{self.what} (gitleaks rule {self.rule})"


def _credential(rule: str, what: str, regex: str) -> Credential:
    return Credential(rule, what, re.compile(regex))


#: The credentials recognised, each from the gitleaks rule named (SOURCE).
CREDENTIALS: Final = (
    _credential("aws-access-token", "an AWS access key id",
                r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b"),
    _credential("gcp-api-key", "a Google Cloud API key", r"\bAIza[\w-]{35}(?![A-Za-z0-9])"),
    _credential("github-pat", "a GitHub personal access token", r"ghp_[0-9a-zA-Z]{36}"),
    _credential("github-oauth", "a GitHub OAuth access token", r"gho_[0-9a-zA-Z]{36}"),
    _credential("github-app-token", "a GitHub App token", r"(?:ghu|ghs)_[0-9a-zA-Z]{36}"),
    _credential("github-fine-grained-pat", "a GitHub fine-grained personal access token", r"github_pat_\w{82}"),
    _credential("gitlab-pat", "a GitLab personal access token", r"glpat-[\w-]{20}"),
    _credential("huggingface-access-token", "a Hugging Face access token",
                r"\bhf_(?i:[a-z]{34})(?![A-Za-z0-9])"),
    _credential("slack-bot-token", "a Slack bot token", r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*"),
    _credential("slack-user-token", "a Slack user token", r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}"),
    _credential("slack-app-token", "a Slack app-level token", r"(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _credential("openai-api-key", "an OpenAI API key",
                r"\bsk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
                r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|\bsk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}"),
    _credential("anthropic-api-key", "an Anthropic API key", r"\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA"),
    _credential("stripe-access-token", "a Stripe access token",
                r"\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}(?![A-Za-z0-9])"),
    _credential("npm-access-token", "an npm access token", r"(?i)\bnpm_[a-z0-9]{36}(?![A-Za-z0-9])"),
    _credential("private-key", "a private key", r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"),
)

#: Where a recognised credential belongs instead of a plain-text field of the job.
INSTEAD: Final = ("keep it in Secret Manager and give the job the secret's name, e.g. an environment variable "
                  "TOKEN_SECRET=projects/PROJECT/secrets/NAME/versions/latest that the trainer reads with the job's "
                  "service account (roles/secretmanager.secretAccessor)")


#: A value that begins with a credential's published prefix (the fixed start of the gitleaks rule named) and goes
#: on with at least 16 characters of a token's alphabet, a digit among them: a test or truncated token that the full
#: patterns above miss is still not sent or shown. Derived from the rules above; "sk-learn" or "hf_hub" stay allowed.
PREFIXES: Final = (
    _credential("slack-bot-token", "a Slack bot token (its prefix xoxb-)", r"^xoxb-(?=[\w-]*\d)[\w-]{16,}"),
    _credential("slack-user-token", "a Slack user token (its prefix xoxp-)", r"^xox[pe]-(?=[\w-]*\d)[\w-]{16,}"),
    _credential("github-pat", "a GitHub token (its prefix ghp_, gho_, ghu_, ghs_ or ghr_)",
                r"^gh[pousr]_(?=\w*\d)\w{16,}"),
    _credential("github-fine-grained-pat", "a GitHub fine-grained token (its prefix github_pat_)",
                r"^github_pat_(?=\w*\d)\w{16,}"),
    _credential("huggingface-access-token", "a Hugging Face token (its prefix hf_)", r"^hf_(?=\w*\d)\w{16,}"),
    _credential("aws-access-token", "an AWS access key id (its prefix AKIA)", r"(?i)^akia(?=\w*\d)\w{12,}"),
    _credential("openai-api-key", "an OpenAI API key (its prefix sk-)", r"^sk-(?=[\w-]*\d)[\w-]{16,}"),
)


def credential_in(text: str) -> Credential | None:
    """The first kind of credential `text` holds (a full pattern anywhere, or a known prefix at its start), or None."""
    return next((c for c in CREDENTIALS if c.pattern.search(text)), None) or \
        next((c for c in PREFIXES if c.pattern.search(text)), None)
