"""The job-file reader (io.documents.parse_yaml) gives what PyYAML's own SafeLoader gives, minus the float
resolver: its fast path (libyaml's composer, a one-step `resolve`, the node tree turned into values directly)
must not change a single value. Each text is read both ways and compared, value for value and type for type.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gcp_training_jobs.jobspec.core.errors import UnreadableError  # noqa: E402
from gcp_training_jobs.jobspec.io.documents import expand, parse_yaml  # noqa: E402


class Reference(yaml.SafeLoader):
    """PyYAML's pure-Python SafeLoader, stock resolve and constructors, without the float resolver."""


Reference.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:float"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def reference(text: str) -> Any:
    return yaml.load(text, Loader=Reference)  # noqa: S506 - a SafeLoader subclass


#: Plain scalars every implicit resolver has an opinion on (YAML 1.1): nulls, booleans, ints in every base,
#: timestamps, decimals that must stay text, and text that merely looks like them.
TRICKY = ["~", "null", "Null", "NULL", "", "yes", "No", "ON", "off", "true", "False", "y", "n", "0", "-0", "+12",
          "0x1F", "0o17", "017", "0b101", "1_000", "190:20:30", "1.10", "2.11", "1e3", ".inf", "-.Inf", ".NaN",
          "2024-01-31", "2024-01-31T10:00:00Z", "2001-12-14 21:59:43.10 -5", "n1-standard-4", "gs://b/x.tar.gz",
          "NVIDIA_TESLA_T4", "us-central1", "a b", "0.5", "-1", "12:30", "Yes please", "nulls", "true_",
          "2024-1-1"]

scalars = st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[A-Za-z0-9_.:/+-]{1,12}", fullmatch=True))


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> str:
    """A block-style YAML mapping (keys and values drawn from TRICKY and plain text), nested up to 3 deep,
    with flow lists among its values."""
    lines = []
    keys = draw(st.lists(st.from_regex(r"[a-z][A-Za-z0-9]{0,8}", fullmatch=True), min_size=1, max_size=5,
                         unique=True))
    pad = "  " * depth
    for key in keys:
        kind = draw(st.sampled_from(["scalar", "flow", "block", "map"] if depth < 3 else ["scalar", "flow"]))
        if kind == "scalar":
            lines.append(f"{pad}{key}: {draw(scalars)}")
        elif kind == "flow":
            items = draw(st.lists(scalars.filter(lambda s: s and not any(c in s for c in ":,")), max_size=4))
            lines.append(f"{pad}{key}: [{', '.join(items)}]")
        elif kind == "block":
            lines.append(f"{pad}{key}:")
            lines += [f"{pad}  - {item}" for item in draw(st.lists(scalars.filter(bool), min_size=1, max_size=3))]
        else:
            lines.append(f"{pad}{key}:")
            lines.append(draw(documents(depth + 1)))
    return "\n".join(lines)


def outcome(read: Any, text: str) -> tuple[str, Any]:
    """What a reader makes of a text: its value with every type spelled out, or that it refused it."""
    try:
        return "value", typed(read(text))
    except (yaml.YAMLError, UnreadableError):
        return "refused", None


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {typed(k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=300, deadline=None)
@given(documents())
def test_the_reader_gives_what_the_safe_loader_gives(text: str) -> None:
    expected = outcome(reference, text)
    event(f"reference: {expected[0]}")
    assert outcome(lambda t: parse_yaml(t, "job.yaml"), text) == expected, text


@pytest.mark.parametrize("scalar", TRICKY)
def test_each_tricky_scalar_reads_as_the_safe_loader_reads_it(scalar: str) -> None:
    text = f"a: {scalar}\nb: [{scalar or 'x'}]\nc:\n  - {scalar or 'x'}\n"
    assert outcome(lambda t: parse_yaml(t, "job.yaml"), text) == outcome(reference, text)


def test_decimals_stay_text_and_other_types_are_kept() -> None:
    assert parse_yaml("runtimeVersion: 1.10\ncount: 0x10\nok: yes\nnone: ~\nday: 2024-01-31\n", "j.yaml") == {
        "runtimeVersion": "1.10", "count": 16, "ok": True, "none": None,
        "day": date(2024, 1, 31)}


def test_a_duplicate_key_is_refused_by_the_fast_path_and_with_aliases() -> None:
    with pytest.raises(UnreadableError, match="duplicate key 'a'"):
        parse_yaml("a: 1\nb: 2\na: 3\n", "j.yaml")
    with pytest.raises(UnreadableError, match="duplicate key 'a'"):
        parse_yaml("x: &v 1\na: *v\na: 2\n", "j.yaml")


def test_a_folder_expands_to_its_yaml_files_in_path_order(tmp_path: Path) -> None:
    """What `validate FOLDER` reads: YAML files at any depth, sorted as paths (`a/b.yaml` before `a-c.yaml`),
    Pulumi.yaml skipped (a stack file read), a symlinked file read, a symlinked folder, a broken link, a folder
    named like a YAML file and a hidden `.yaml` (no suffix, as pathlib has it) left out."""
    for name in ("a/b/x.yaml", "a-c/y.yml", "a.yaml", ".hid/z.yaml", "Pulumi.yaml", "Pulumi.dev.yaml", "q.txt",
                 ".yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    (tmp_path / "d.yaml").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (tmp_path / "l.yaml").symlink_to(tmp_path / "a.yaml")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "nowhere")
    found = [str(p.relative_to(tmp_path)) for p in expand([str(tmp_path)])]
    assert found == [".hid/z.yaml", "Pulumi.dev.yaml", "a/b/x.yaml", "a-c/y.yml", "a.yaml", "l.yaml"]
    assert list(expand([str(tmp_path / "q.txt")])) == [tmp_path / "q.txt"]  # a file named is read as named
