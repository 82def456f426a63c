"""The credential scan on a held-out set (tests/data/credential_set.py): each credential of the kinds once missed
is found, named by its kind and masked, never printed; no ordinary value of a job is refused."""

from __future__ import annotations

import pytest

from gcp_training_jobs.jobspec.catalog.credentials import credential_in, found_in, masked, masked_text
from tests.data.credential_set import NEGATIVES, POSITIVES


def _secret_part(value: str) -> str:
    """The part of a value that must never be printed: after the last `=` or `:` of a flag, the userinfo of a URL."""
    if "://" in value and "@" in value:
        return value.split("://", 1)[1].split("@", 1)[0].split(":", 1)[-1]
    return value.split("=", 1)[1] if value.startswith("--") and "=" in value else value


@pytest.mark.parametrize(("name", "value"), POSITIVES)
def test_each_credential_is_found_and_never_printed(name: str, value: str) -> None:
    kind = credential_in(value, name)
    assert kind is not None, (name, value)
    data = {"env": [{"name": name, "value": value}]} if name and not name.startswith("-") else \
        {"args": [name, value] if name else [value]}
    (found,) = found_in(data)
    shown = repr(masked(data).value)
    assert _secret_part(value) not in shown, shown
    assert "not shown" in shown
    assert found.kind.what in kind.what or found.kind == kind
    if not name:
        assert _secret_part(value) not in masked_text(f"args: {value} --epochs=2")


@pytest.mark.parametrize(("name", "value"), NEGATIVES)
def test_no_ordinary_value_is_taken_for_one(name: str, value: str) -> None:
    assert credential_in(value, name) is None, (name, value)
    data = {"env": [{"name": name, "value": value}]} if name and not name.startswith("-") else \
        {"args": [name, value] if name else [value]}
    assert found_in(data) == ()
    assert masked_text(value) == value
