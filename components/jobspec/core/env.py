"""The process's environment settings: every `GCP_TRAINING_JOBS_*` variable, with its type, default, bounds
and meaning, read through one pydantic-settings `BaseSettings` (env prefix `GCP_TRAINING_JOBS_`).

`env_settings()` is how the code reads them, each time it needs one (nothing is read at import, and no
module keeps a settings object: tests set variables between calls, and the Pulumi engine calls the provider
from several threads). A value outside what its variable allows is an `EnvError`, a SpecError with one
Problem per bad variable whose path is the variable's name, e.g.
`GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS: 'abc' is not a number; allowed: a number of seconds more than 0 and
at most 86400, or unset for 60` (exit 1 on the command line, a check failure in the provider). A variable
set to blank text counts as unset.

Only the documented, upper-case names are read, through pydantic-settings' own environment source. Building
a `BaseSettings` costs about 0.4 ms (pydantic-settings inspects every field's annotation on each build),
more than judging one job, so `env_settings()` keeps the settings built from each set of values of these
variables (`_settings_of`, an lru_cache whose key is those names and values: a pure function of its key, so
a cached answer is exactly what a new read would give, and a changed variable is a new key). Making the key
(one os.environ lookup per variable) and finding it cost about 10 us.
"""

from __future__ import annotations

import functools
import os
import reprlib
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from components.jobspec.core.errors import SpecError
from components.jobspec.core.names import ENDPOINT, ENV_PREFIX
from components.jobspec.core.problems import Problem

#: The longest wait any variable may set: one day. A bound against a unit slip (milliseconds written as
#: seconds), and below what a socket timeout can hold (Python refuses about 1e10 s: "timestamp out of range").
MAX_SECONDS: Final = 86_400.0
#: The defaults of the waits (the one home of each; transport and lifecycle read them from here).
HTTP_TIMEOUT_SECONDS: Final = 60.0
RETRY_BASE_SECONDS: Final = 0.5
RECONCILE_SECONDS: Final = 180.0


def _seconds(default: float, meaning: str, *, zero: bool) -> Any:
    """A number of seconds, finite, at most MAX_SECONDS; from 0 when `zero`, else more than 0."""
    words = "from 0 to" if zero else "more than 0 and at most"
    allowed = f"a number of seconds {words} {MAX_SECONDS:g}, or unset for {default:g}"
    return Field(default, ge=0.0 if zero else None, gt=None if zero else 0.0, le=MAX_SECONDS, allow_inf_nan=False,
                 description=meaning, json_schema_extra={"allowed": allowed})


class EnvFields(BaseModel):
    """Every environment variable the library reads (prefix GCP_TRAINING_JOBS_), typed and bounded: the fields
    of `EnvSettings`, which reads them."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    http_timeout_seconds: float = _seconds(
        HTTP_TIMEOUT_SECONDS, "The Google API client's HTTP timeout per request (a test of a slow create sets a "
                              "short one).", zero=False)
    retry_base_seconds: float = _seconds(
        RETRY_BASE_SECONDS, "The first wait of the retries' exponential backoff (full jitter, capped at 30 s); tests "
                            "and the emulator shorten it.", zero=True)
    reconcile_seconds: float = _seconds(
        RECONCILE_SECONDS, "How long a Vertex AI create whose outcome is unknown is looked for by its labels before "
                           "it fails with CreateOutcomeUnknown (it is never sent again).", zero=True)
    today: date | None = Field(
        None, description="The day date rules judge against (end of support, end of availability) for the whole "
                          "process; Options(today=...) sets it for one call. Unset: the system's date.",
        json_schema_extra={"allowed": "YYYY-MM-DD (e.g. 2026-11-22), or unset for the system's date"})
    api_endpoint: str | None = Field(
        None, description="The API endpoint of the providers and `prices refresh` (the emulator); a stack's "
                          "`apiEndpoint` config wins. Credentials go only over TLS or to loopback (checked where "
                          "they are sent). Unset: Google's.",
        json_schema_extra={"allowed": "an http(s) URL: https://HOST/, or http://127.0.0.1:PORT/ (loopback, the "
                                      "emulator), or unset for Google's endpoints"})
    build_dir: Path | None = Field(
        None, description="Where trainer archives are built. Unset: .build/trainers in the project.",
        json_schema_extra={"allowed": "a folder path, or unset for .build/trainers in the project"})
    prices_file: Path | None = Field(
        None, description="The refreshed price table (`prices refresh` writes it, estimates read it first). Unset: "
                          "gcp-training-jobs/prices.json in the user cache folder.",
        json_schema_extra={"allowed": "a file path, or unset for the user cache folder"})

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        """Values without surrounding blanks; a blank one is unset (its default)."""
        if not isinstance(data, dict):
            return data
        return {key: value.strip() if isinstance(value, str) else value for key, value in data.items()
                if not (isinstance(value, str) and not value.strip())}

    @field_validator("today", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return date.fromisoformat(value)
            except ValueError:
                raise ValueError("not a date") from None
        return value

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not ENDPOINT.fullmatch(value):
            raise ValueError("not an http(s) URL")
        return value



@functools.cache
def settings_class() -> type[EnvFields]:
    """`EnvSettings`: EnvFields read by pydantic-settings (a `BaseSettings`, env prefix GCP_TRAINING_JOBS_), made
    at its first use. Importing pydantic-settings costs about 90 ms of a command's start (it brings asyncio and
    ssl), more than `validate` of a file: a process none of whose variables is set never pays it, and takes the
    fields' defaults (`env_settings`)."""
    from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

    class Variables(EnvSettingsSource):
        """pydantic-settings' environment source (its prefix and field names) over the variables given rather
        than all of os.environ, as its own DotEnvSettingsSource reads a file's."""

        def __init__(self, settings_cls: type[BaseSettings], variables: Mapping[str, str]):
            self.variables = dict(variables)
            super().__init__(settings_cls)

        def _load_env_vars(self) -> Mapping[str, str | None]:
            return {name if self.case_sensitive else name.lower(): value for name, value in self.variables.items()}

    class EnvSettings(BaseSettings, EnvFields):  # type: ignore[misc]
        __doc__ = EnvFields.__doc__
        model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

        @classmethod
        def settings_customise_sources(
            cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            """Arguments, then the documented variables in os.environ: no .env file or secrets folder is read."""
            return init_settings, Variables(settings_cls, dict(documented(os.environ)))

        @classmethod
        def from_variables(cls, variables: Mapping[str, str]) -> EnvSettings:
            """The settings these variables give, whatever os.environ holds."""
            # Every field is given (the variables' values, else its default): BaseSettings would otherwise fill
            # the missing ones from os.environ, which is not what a caller that passed its own `environ` asked.
            given = {name: field.default for name, field in cls.model_fields.items()}
            return cls.model_validate({**given, **Variables(cls, variables)()})

    return EnvSettings


def __getattr__(name: str) -> Any:
    """`EnvSettings`, made when first asked for (settings_class)."""
    if name == "EnvSettings":
        return settings_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class EnvError(SpecError):
    """Environment variables with values outside what they allow: one Problem per variable, named by it."""


#: Every variable read, by its setting's name (`http_timeout_seconds`: GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS).
VARIABLES: Final[Mapping[str, str]] = MappingProxyType({field: ENV_PREFIX + field.upper()
                                                        for field in EnvFields.model_fields})


def allowed_of(field: str) -> str:
    """What a setting's variable may be set to, in words."""
    extra = EnvFields.model_fields[field].json_schema_extra
    if not isinstance(extra, dict) or "allowed" not in extra:
        raise TypeError(f"the setting {field!r} does not say what it allows")
    return str(extra["allowed"])


def documented(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The documented variables set in `environ`, as (name, value) pairs in a fixed order."""
    found = ((name, environ.get(name)) for name in VARIABLES.values())
    return tuple((name, value) for name, value in found if value is not None)


def env_settings(environ: Mapping[str, str] | None = None) -> EnvFields:
    """The settings the environment gives now (os.environ, or `environ`): EnvError names every bad variable.
    With none of the variables set, the fields' defaults (pydantic-settings is not even imported)."""
    variables = documented(os.environ if environ is None else environ)
    return _settings_of(variables) if variables else _DEFAULTS


@functools.lru_cache(maxsize=32)
def _settings_of(variables: tuple[tuple[str, str], ...]) -> EnvFields:
    """The settings these variables give (a pure function of them; see the module's note on the cache)."""
    try:
        return settings_class().from_variables(dict(variables))  # type: ignore[attr-defined,no-any-return]
    except ValidationError as error:
        raise EnvError(_problems(error)) from None


#: pydantic's error kinds, in this project's words.
_WHAT: Final[Mapping[str, str]] = MappingProxyType({
    "float_parsing": "not a number", "float_type": "not a number", "finite_number": "not a finite number",
    "greater_than": "too small", "greater_than_equal": "too small", "less_than": "too large",
    "less_than_equal": "too large",
})


def _problems(error: ValidationError) -> list[Problem]:
    """One problem per bad variable: its name, the value given, what is wrong and what is allowed (in this
    project's words, never pydantic's)."""
    problems = []
    for err in error.errors(include_url=False):
        field, kind = str(err["loc"][0]), err["type"]
        what = (err.get("ctx") or {}).get("error") if kind == "value_error" else _WHAT.get(kind)
        problems.append(Problem(VARIABLES[field], f"{reprlib.repr(err.get('input'))} is {what or 'not allowed'}; "
                                                  f"allowed: {allowed_of(field)}"))
    return problems


#: The settings of a process that sets none of the variables: every field's default.
_DEFAULTS: Final = EnvFields.model_validate({})
