"""A value from a stack file is printed as text, never as markup or a terminal control: the pull request comment,
rendered as GitHub renders it (raw HTML kept), shows none of a job's HTML, links, images, mentions or folded
details; a terminal gets no control character of a job's values from `plan`, `validate` or `diff`."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.cli.diff.command import diff
from gcp_training_jobs.cli.diff.text import md, render_markdown, render_text
from gcp_training_jobs.cli.terminal import terminal_text
from tests.helpers import commit_all, scratch_review

ROOT = Path(__file__).resolve().parents[1]
#: What a hostile pull request writes into a job's values.
HOSTILE = ("<img src=x onerror=alert(1)>", "</details><details open><summary>x</summary>",
           "[click](https://evil.example/a)", "![pixel](https://evil.example/p.png)", "<https://evil.example/b>",
           "https://evil.example/c", "www.evil.example", "@everyone", "@octo-org/admins", "&#64;here",
           "<a href='https://evil.example/d'>d</a>", "`` ` ``", "x | y",
           "**bold**", "<!-- hidden -->")
ESCAPES = "\x1b[2J\x1b]0;title\x07\r\x9b31m\u202e"


def stack(args: list[str], name: str = "train") -> str:
    job = {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1,
        "containerSpec": {"imageUri": "us-central1-docker.pkg.dev/my-ml-qa/trainers/example:0.1", "args": args}}],
        "scheduling": {"strategy": "SPOT", "timeout": "3600s"}}}
    return yaml.safe_dump({"config": {"gcp:project": "my-ml-qa", "gcp:region": "us-central1",
                                      "gcp-training-jobs:jobs": {name: job}}})


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with scratch_review(tmp_path_factory, "markup") as repo:
        (repo / "stacks" / "Pulumi.qa.yaml").write_text(stack(["--epochs=1"]))
        base = commit_all(repo, "base")
        (repo / "stacks" / "Pulumi.qa.yaml").write_text(stack(["--epochs=2", *(f"--note={h}" for h in HOSTILE),
                                                               f"--title={ESCAPES}"]))
        (repo / "stacks" / "Pulumi.qb.yaml").write_text(stack([f"--x={h}" for h in HOSTILE], name="eval"))
        commit_all(repo, "head")
        found = diff(base, None, None)
        assert isinstance(found, dict), found
        yield found


def _rendered(markdown: str) -> str:
    """The comment as HTML, raw HTML kept (GitHub renders a comment's raw HTML), tables on."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _outside_code(rendered: str) -> str:
    """The rendered HTML without the contents of its code spans and blocks: where markup would take effect."""
    return re.sub(r"<code>.*?</code>", "<code></code>", rendered, flags=re.DOTALL)


def test_the_comment_renders_no_html_link_image_or_mention_of_a_job(document: dict[str, Any]) -> None:
    markdown = render_markdown(document)
    assert "--note=" in markdown, markdown  # the values are there, as text
    rendered = _rendered(markdown)
    outside = _outside_code(rendered)
    tags = {tag.lower() for tag in re.findall(r"<([a-zA-Z][\w-]*)", outside)}
    assert tags <= {"h3", "h4", "p", "code", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong",
                    "blockquote", "details", "summary", "em"}, tags
    assert "<img" not in outside and "<a " not in outside and "<a>" not in outside
    assert outside.count("<details>") == 1 and "<details open" not in outside  # only the comment's own fold
    assert "evil.example" not in outside and "@everyone" not in outside and "@octo-org" not in outside
    assert "<!-- hidden -->" not in outside
    # each value is still shown, as text, inside a code span
    for value in ("<img src=x onerror=alert(1)>", "[click](https://evil.example/a)", "@everyone"):
        assert html.escape(value, quote=False) in rendered, value


def test_the_comment_keeps_a_plain_value_plain() -> None:
    assert md("g2-standard-24, 2 x NVIDIA_L4 on demand: $1.22/h -> $2.44/h") == \
        "g2-standard-24, 2 x NVIDIA_L4 on demand: $1.22/h -> $2.44/h"
    assert md("--note=<b>") == "`--note=<b>`"
    assert md("a ``b`` c") == "```a ``b`` c```"
    assert md("x | y", in_table=True) == "`x \\| y`"
    assert md("one\ntwo") == "one two"


def test_diff_text_and_terminal_text_carry_no_control_character(document: dict[str, Any]) -> None:
    text = terminal_text(render_text(document))
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text)
    assert "\\u001b[2J" in text or "--title" not in render_text(document)
    assert terminal_text("a\tb\nc\x1b[2Jd\u202e") == "a\tb\nc\\u001b[2Jd\\u202e"


def test_plan_and_validate_print_a_jobs_control_characters_escaped(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (repo / name).write_bytes((ROOT / name).read_bytes())
    (repo / "stacks" / "Pulumi.esc.yaml").write_text(stack(["--epochs=1", f"--title={ESCAPES}"]))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for argv in (["plan", "--stack", "esc", "--stacks-dir", "stacks"],
                 ["validate", "stacks/Pulumi.esc.yaml"]):
        done = subprocess.run([sys.executable, "-m", "components", *argv], cwd=repo, capture_output=True,
                              timeout=300, env=env)
        out = (done.stdout + done.stderr).decode()
        assert done.returncode == 0, out
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out), out
        if argv[0] == "plan":
            assert "--title=\\u001b[2J\\u001b]0;title\\u0007\\u000d\\u009b31m\\u202e" in out, out
