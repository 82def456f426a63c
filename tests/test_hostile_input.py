"""Hostile input costs bounded work: `validate` (the pull-request check) refuses each file cleanly, with a
message, exit 1 or 2 and no traceback; and the settings' secret scan stays bounded on such values.

The subprocess timeout only guards the suite against a hang; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pulumi  # noqa: E402
import pytest  # noqa: E402

from gcp_training_jobs.cli.plan.mocks import mocked_pulumi  # noqa: E402
from gcp_training_jobs.jobspec.core.errors import SpecError, UnreadableError  # noqa: E402
from gcp_training_jobs.jobspec.core.names import NAMESPACE  # noqa: E402
from gcp_training_jobs.jobspec.io import documents  # noqa: E402
from gcp_training_jobs.jobspec.io.documents import MAX_BYTES, read_text  # noqa: E402
from gcp_training_jobs.resources.settings import from_pulumi_config  # noqa: E402
from gcp_training_jobs.resources.settings.judge import judge  # noqa: E402
from gcp_training_jobs.resources.settings.secrets import bounds_problem, holds_secret, secure_keys  # noqa: E402

HANG_GUARD_SECONDS = 60

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
trainingInput: {scaleTier: BASIC, region: us-central1, args: *i}
"""


def validate(*paths: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", "validate", *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)


def refused(done: subprocess.CompletedProcess[str], code: int, message: str) -> None:
    text = done.stdout + done.stderr
    assert done.returncode == code, text[:2000]
    assert "Traceback" not in text and "RecursionError" not in text, text[:2000]
    assert message in text, text[:2000]


@pytest.mark.parametrize("name", ["config.yaml", "Pulumi.hostile.yaml"])
@pytest.mark.slow
def test_a_billion_laughs_is_refused_before_it_is_expanded(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "config.yaml":
        path.write_text(BILLION_LAUGHS)
    else:  # the same aliases inside a stack file's config, feeding the stack labels
        lines = [f"  {NAMESPACE}:x{line}" for line in BILLION_LAUGHS.splitlines()[:-1]]
        path.write_text("config:\n" + "\n".join(lines) + f"\n  {NAMESPACE}:labels: {{owner: *i}}\n")
    refused(validate(path), 2, "expands to more than 200,000 values (aliases); allowed: at most 200,000")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x\n",
                                  "trainingInput: " + "{a: " * 100_000 + "1" + "}" * 100_000])
@pytest.mark.slow
def test_nesting_100000_deep_is_refused_without_a_recursion_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    refused(validate(path), 2, "allowed: at most 64")


def test_a_parser_that_refuses_nesting_first_still_gets_the_projects_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever libyaml a PyYAML wheel bundles: a parser that gives up on deep nesting before our bound counts
    (libyaml 0.2.6 does, in its own words, 1,000 levels in) still yields our line, at the first level too deep;
    a parser error on shallow text keeps its own problem."""
    real_parse = documents.yaml.parse

    def gives_up_at(index: int) -> Any:
        def parse(text: str, Loader: Any) -> Any:  # noqa: N803 - yaml.parse's own keyword
            mark = documents.yaml.Mark("<text>", index, 0, index, None, 0)
            yield from ()
            raise documents.yaml.scanner.ScannerError(None, None, "a parser's own words", mark)
        return parse

    monkeypatch.setattr(documents.yaml, "parse", gives_up_at(1_000))
    with pytest.raises(UnreadableError) as caught:
        documents.parse_yaml("x: " + "[" * 5_000 + "]" * 5_000, "deep.yaml")
    assert str(caught.value) == "deep.yaml:1:68: nested more than 64 levels deep; allowed: at most 64"
    # Brackets inside quotes and comments nest nothing: the parser's own problem stands.
    shallow = "x: '" + "[" * 100 + "'\n# " + "{" * 100 + "\ny: [" + "\n" * 70
    monkeypatch.setattr(documents.yaml, "parse", gives_up_at(len(shallow) - 1))
    with pytest.raises(UnreadableError) as caught:
        documents.parse_yaml(shallow, "shallow.yaml")
    assert "not valid YAML" in str(caught.value) and "allowed: at most 64" not in str(caught.value)
    monkeypatch.setattr(documents.yaml, "parse", real_parse)


@pytest.mark.slow
def test_a_60_mb_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(60 * 1024 * 1024)
    refused(validate(path), 2, "62,914,560 bytes; allowed: at most 4,194,304 bytes")


def test_a_file_that_grows_after_its_size_is_read_is_read_whole_or_refused(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The size is taken from the open file, then the file is read by it: one that grew in between (its size
    said 10 bytes) is read whole, never cut at 11 bytes, and still refused past MAX_BYTES."""
    fstat = os.fstat

    def taken_while_small(fd: int) -> os.stat_result:
        info = fstat(fd)
        return os.stat_result((info.st_mode, *info[1:6], 10, *info[7:]))

    monkeypatch.setattr(documents.os, "fstat", taken_while_small)
    small = tmp_path / "grew.yaml"
    small.write_text("trainingInput:\n  scaleTier: BASIC\n  region: us-central1\n")
    assert read_text(small) == small.read_text()
    big = tmp_path / "grew-big.yaml"
    with big.open("wb") as handle:
        handle.truncate(MAX_BYTES + 100)
    with pytest.raises(UnreadableError, match="more than 4,194,304 bytes; allowed: at most 4,194,304"):
        read_text(big)


@pytest.mark.slow
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "job.yaml"
    os.mkfifo(fifo)
    refused(validate(fifo), 2, "job.yaml: not a regular file; allowed: a YAML file")
    refused(validate(tmp_path), 2, "no YAML files found")  # in a folder, only regular files are YAML files


@pytest.mark.slow
def test_dev_zero_and_other_special_files_are_refused() -> None:
    refused(validate("/dev/zero"), 2, "/dev/zero: not a regular file; allowed: a YAML file")


@pytest.mark.slow
def test_control_characters_in_keys_are_printed_escaped(tmp_path: Path) -> None:
    path = tmp_path / "ctrl.yaml"
    path.write_text('trainingInput:\n  scaleTier: BASIC\n  region: us-central1\n  "bad\\e[31mkey\\x07": 1\n')
    done = validate(path)
    refused(done, 1, "trainingInput.bad\\x1b[31mkey\\x07: unknown field")
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr


# --- the settings' secret scan --------------------------------------------------------------------------

def shared_dag(levels: int) -> Any:
    """A value of `levels` levels whose every level holds the one below twice: 2**levels leaves once expanded
    (what YAML aliases build; a walk that expands it never ends)."""
    value: Any = ["lol"]
    for _ in range(levels):
        value = [value, value]
    return value


def test_the_secret_scan_and_bounds_check_stop_on_an_expanding_value() -> None:
    dag = shared_dag(60)
    assert bounds_problem(dag) is not None
    assert holds_secret(dag) is True  # past the bound it counts as secret: never shown
    assert secure_keys({f"{NAMESPACE}:labels": dag}) == frozenset({"labels"})
    with pytest.raises(SpecError) as caught:
        judge({"gcp:project": "my-ml-test", f"{NAMESPACE}:labels": dag}, ROOT)
    (problem,) = caught.value.problems
    assert str(problem).startswith(f"{NAMESPACE}:labels: ")
    assert "allowed: at most" in str(problem)


def test_deep_json_from_pulumi_config_is_a_clean_error_naming_the_key() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    wide = json.dumps({"env": json.loads("[" * 70 + "1" + "]" * 70)})  # JSON reads it; 70 levels is past the bound
    config = {"gcp:project": "my-ml-test", f"{NAMESPACE}:jobs": deep, f"{NAMESPACE}:labels": wide}
    with mocked_pulumi("hostile", config), pytest.raises(pulumi.RunError) as caught:
        from_pulumi_config(ROOT)
    text = str(caught.value)
    assert f"{NAMESPACE}:jobs: nested too deeply to be read; allowed: at most 64 levels" in text
    assert f"{NAMESPACE}:labels: nested more than 64 levels deep; allowed: at most 64" in text
