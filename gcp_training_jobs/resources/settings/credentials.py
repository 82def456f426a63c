"""A credential written plainly in a stack file is refused, not only masked.

A value of `gcp-training-jobs:jobs` (or any key of the namespace) written in plain text in the stack file is given by
the engine, with the whole stack config, to every dynamic provider, and the engine stores that config in the state
(the inputs of `pulumi:providers:pulumi-python::default`): masking it in every output does not keep it out of
`pulumi stack export`. So a value that holds a credential (`catalog.credentials`: by its shape, or by its name) and is
not encrypted (`secure:`) is a problem of the stack, named by its key, with the command that encrypts it in place;
the program registers nothing, so nothing is deployed and nothing is stored. A stack that decides otherwise says so in
one setting, `gcp-training-jobs:plaintextCredentials: allow` (the credential is then warned of, as in a job file on
its own, and stored in the state). Judged where the stack is (`judge.judge`), offline and in the program alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.credentials import INSTEAD, found_in
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.resources.settings.secrets import bounds_problem, opaque, secure_paths

#: The stack setting that decides (`refuse`, the default, or `allow`).
SETTING: Final = "plaintextCredentials"


def plaintext_credential_problems(config: Mapping[str, Any], secret_paths: frozenset[str] = frozenset(),
                                  secret_keys: frozenset[str] = frozenset()) -> list[Problem]:
    """Each value of our namespace that holds a credential in plain text, refused at its key with the command that
    encrypts it; none when the stack allows them (`plaintextCredentials: allow`). `secret_paths`: where the stack file
    holds encrypted values when `config` holds them decrypted (a program); `secret_keys`: the keys a secret is inside,
    of which a key with no path known (a secret from elsewhere than the file) is left alone: it cannot be told apart."""
    if config.get(f"{NAMESPACE}:{SETTING}") == "allow":
        return []
    secret_paths = secret_paths | secure_paths(config)  # offline, the encrypted values are still in `config`
    known = {path.split(".", 1)[0].split("[", 1)[0] for path in secret_paths}
    problems: list[Problem] = []
    for full_key, value in config.items():
        namespace, _, key = str(full_key).partition(":")
        if namespace != NAMESPACE or key == SETTING or (key in secret_keys and key not in known):
            continue
        if bounds_problem(value) is not None:  # refused at its key by the judge; a walk would expand it
            continue
        for found in found_in(opaque(value)):  # an encrypted value (`secure: ...`) is no plain text
            path = f"{key}.{found.path}" if found.path else key
            if path in secret_paths:
                continue
            problems.append(Problem(f"{NAMESPACE}:{path}", _refusal(path, found.kind.named())))
    return problems


def _refusal(path: str, kind: str) -> str:
    return (f"holds what looks like {kind} (not shown), written in plain text in the stack file: the engine stores "
            "the stack's config in the state, so `pulumi stack export` would hold it; allowed: the value encrypted, "
            f"`pulumi config set --secret --path '{NAMESPACE}:{path}' -- VALUE`, or, "
            f"better, {INSTEAD}; or `{NAMESPACE}:{SETTING}: allow` in the stack file, to keep it in plain text "
            "(stored in the state)")
