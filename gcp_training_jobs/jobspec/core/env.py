"""Every `GCP_TRAINING_JOBS_*` environment variable, with its type, default and bounds: the fields of one pydantic
model validated from the environment at each use (`env_settings()`). Nothing is read at import or kept: tests change
variables between calls, and the engine calls providers from several threads. A bad value is an `EnvError`, one
Problem per variable, named by it, saying what it allows; a blank value is unset. docs/reference/environment.md says
what each means."""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from gcp_training_jobs.jobspec.core import endpoints
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import ENV_PREFIX
from gcp_training_jobs.jobspec.core.problems import Problem

#: The longest wait a variable may set, one day: a bound against a unit slip, and below what a socket timeout holds.
MAX_SECONDS: Final = 86_400
#: The defaults of the waits (the one home of each; transport and lifecycle read them from here).
HTTP_TIMEOUT_SECONDS: Final = 60.0
RETRY_BASE_SECONDS: Final = 0.5
RECONCILE_SECONDS: Final = 180.0


#: A wait: a finite number of seconds up to MAX_SECONDS, from 0 (_Wait) or above 0 (_Timeout).
_Wait = Annotated[float, Field(ge=0.0, le=MAX_SECONDS, allow_inf_nan=False)]
_Timeout = Annotated[float, Field(gt=0.0, le=MAX_SECONDS, allow_inf_nan=False)]


def _iso_date(value: Any) -> Any:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else value
    except ValueError:
        raise ValueError("not a date") from None


def _hosts(value: str | None) -> str | None:
    bad = [h for h in endpoints.allowed_hosts(value) if not endpoints.HOST_NAME.fullmatch(h)]
    if bad:
        raise ValueError(f"not a list of host names ({bad[0][:80]!r} is not one)")
    return value


_WAIT = "a number of seconds {} " + str(MAX_SECONDS) + ", or unset for {:g}"


def _variable(default: Any, allowed: str, meaning: str) -> Any:
    """A variable's field: its default, what it may be set to (the words its error says; the reference page's
    "allowed" and "default", split at ", or unset for ") and what it is for (the page's "meaning")."""
    return Field(default, description=meaning, json_schema_extra={"allowed": allowed})


class EnvSettings(BaseModel):
    """The variables' values: a variable is its field's name, upper case, after GCP_TRAINING_JOBS_. Each field
    is the one description of its variable (docs/reference/environment.md is written from them)."""

    model_config = ConfigDict(frozen=True)

    http_timeout_seconds: _Timeout = _variable(
        HTTP_TIMEOUT_SECONDS, _WAIT.format("more than 0 and at most", HTTP_TIMEOUT_SECONDS),
        "the Google API client's HTTP timeout per request")
    retry_base_seconds: _Wait = _variable(
        RETRY_BASE_SECONDS, _WAIT.format("from 0 to", RETRY_BASE_SECONDS),
        "the first wait of the retries' exponential backoff (full jitter, capped at 30 s)")
    reconcile_seconds: _Wait = _variable(
        RECONCILE_SECONDS, _WAIT.format("from 0 to", RECONCILE_SECONDS),
        "how long a Vertex AI create whose outcome is unknown is looked for before it fails (see "
        "[Recovering after a crash](../recovery-and-security.md#recovering-after-a-crash))")
    today: Annotated[date | None, BeforeValidator(_iso_date)] = _variable(
        None, "YYYY-MM-DD (e.g. 2026-11-22), or unset for the system's date",
        "the day date rules (end of support, end of availability) judge against")
    allowed_endpoint_hosts: Annotated[str | None, AfterValidator(_hosts)] = _variable(
        None, "host names, comma-separated (e.g. proxy.example.internal,10.0.0.5), or unset for none",
        "the hosts besides Google's API hosts and loopback an endpoint (`apiEndpoint`, "
        "`GCP_TRAINING_JOBS_API_ENDPOINT`, `--endpoint`) may name, over https only; an environment variable, never a "
        "stack key, as the stack file is what a pull request changes")
    api_endpoint: str | None = _variable(
        None, f"{endpoints.ALLOWED}, or unset for Google's endpoints",
        "the endpoint of the providers and `prices refresh`; a stack's `apiEndpoint` wins")
    build_dir: Path | None = _variable(
        None, "a folder path, or unset for .build/trainers in the project", "where trainer archives are built")
    prices_file: Path | None = _variable(
        None, "a file path, or unset for the user cache folder",
        "the refreshed price table estimates read first (`prices refresh` writes it); the user cache folder is "
        "`gcp-training-jobs/prices.json` in `$XDG_CACHE_HOME` (else `~/.cache`)")

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The endpoint judged with the hosts the environment allows (endpoints.endpoint_problem)."""
        if value is not None and (problem := endpoints.endpoint_problem(
                value, endpoints.allowed_hosts(info.data.get("allowed_endpoint_hosts")))):
            raise ValueError(problem)
        return value

    @property
    def endpoint_hosts(self) -> tuple[str, ...]:
        """The hosts besides Google's an endpoint may name ($GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS)."""
        return endpoints.allowed_hosts(self.allowed_endpoint_hosts)


#: What each field's variable may be set to, in words, and what it is for (read from the fields).
ALLOWED: Final[Mapping[str, str]] = MappingProxyType(
    {name: str((info.json_schema_extra or {})["allowed"]) for name, info in EnvSettings.model_fields.items()})  # type: ignore[index]
MEANINGS: Final[Mapping[str, str]] = MappingProxyType(
    {name: str(info.description) for name, info in EnvSettings.model_fields.items()})


class EnvError(SpecError):
    """Environment variables with values outside what they allow: one Problem per variable, named by it."""


#: Every variable read, by its field (`http_timeout_seconds`: GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS).
VARIABLES: Final[Mapping[str, str]] = MappingProxyType({f: ENV_PREFIX + f.upper() for f in EnvSettings.model_fields})
#: pydantic's error kinds, in this project's words.
_WHAT: Final = {"float_parsing": "not a number", "float_type": "not a number", "finite_number": "not a finite number",
                "greater_than": "too small", "greater_than_equal": "too small", "less_than_equal": "too large"}
_DEFAULTS: Final = EnvSettings.model_validate({})


def env_settings(environ: Mapping[str, str] | None = None) -> EnvSettings:
    """The settings the environment gives now (os.environ, or `environ`); EnvError names every bad variable."""
    environ = os.environ if environ is None else environ
    given = {field: value.strip() for field, name in VARIABLES.items() if (value := environ.get(name, "")).strip()}
    try:
        return EnvSettings.model_validate(given) if given else _DEFAULTS
    except ValidationError as error:
        raise EnvError([_problem(str(e["loc"][0]), e) for e in error.errors(include_url=False)]) from None


def _problem(field: str, error: Any) -> Problem:
    """A bad variable in this project's words: its name, the value given, what is wrong, what is allowed."""
    what = (error.get("ctx") or {}).get("error") if error["type"] == "value_error" else _WHAT.get(error["type"])
    given = endpoints.shown(error["input"]) if field == "api_endpoint" else reprlib.repr(error["input"])
    return Problem(VARIABLES[field], f"{given} is {what or 'not allowed'}; "
                                     f"allowed: {ALLOWED[field]}")
