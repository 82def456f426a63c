"""The release: one version (gcp_training_jobs/jobspec/core/version.py's __version__, exported as
gcp_training_jobs.__version__) that
the built wheel's metadata, the command line's --version and CHANGELOG.md's newest released section all say;
scripts/release_notes.py, which the release workflow runs first, refuses a tag that disagrees and prints the tag's
changelog section; the workflow publishes with trusted publishing only; .ci/run builds and checks the distributions
before the README's test command."""

from __future__ import annotations

import contextlib
import io
import re
import tomllib
from pathlib import Path

import pytest
import yaml

import gcp_training_jobs
from gcp_training_jobs.cli.main import parser
from tests.helpers import install_wheel, run_ok, script

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


NOTES = script("release_notes")


def run_script(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = NOTES.main(list(argv))
    return code, out.getvalue(), err.getvalue()


# --- one version --------------------------------------------------------------------------------------------

def test_pyproject_reads_the_version_from_its_one_home() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    home = {"attr": "gcp_training_jobs.jobspec.core.version.__version__"}
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == home
    assert NOTES.version_in() == gcp_training_jobs.__version__


def test_the_changelogs_newest_release_and_the_command_line_say_the_version() -> None:
    assert NOTES.newest(CHANGELOG) == gcp_training_jobs.__version__
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit) as ended:
        parser().parse_args(["--version"])
    assert ended.value.code == 0
    assert shown.getvalue().strip() == f"gcp-training-jobs {gcp_training_jobs.__version__}"


def test_the_changelog_keeps_the_format() -> None:
    """Keep a Changelog 1.1.0: a title, [Unreleased] first, then released versions newest first, each dated."""
    headings = re.findall(r"^## (.*)$", CHANGELOG, flags=re.M)
    assert CHANGELOG.startswith("# Changelog\n") and headings[0] == "[Unreleased]"
    released = [NOTES.RELEASED.match(f"## {h}") for h in headings[1:]]
    assert released and all(released), headings
    versions = [tuple(int(p) for p in m.group("version").split(".")) for m in released if m]
    dates = [m.group("date") for m in released if m]
    assert versions == sorted(versions, reverse=True) and dates == sorted(dates, reverse=True)
    kinds = set(re.findall(r"^### (.*)$", CHANGELOG, flags=re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds


@pytest.mark.slow
def test_the_built_wheels_metadata_and_installed_command_say_the_version(tmp_path: Path) -> None:
    python, site = install_wheel(tmp_path)
    (info,) = site.glob("gcp_training_jobs-*.dist-info")
    metadata = (info / "METADATA").read_text()
    assert re.search(r"^Name: gcp-training-jobs$", metadata, flags=re.M)
    assert re.search(rf"^Version: {re.escape(gcp_training_jobs.__version__)}$", metadata, flags=re.M), metadata[:300]
    shown = run_ok(python.parent / "gcp-training-jobs", "--version", cwd=tmp_path)
    assert shown.strip() == f"gcp-training-jobs {NOTES.newest(CHANGELOG)}"
    # The licence (PEP 639): its SPDX expression in the metadata, its text in the wheel as the repository holds it.
    assert re.search(r"^License-Expression: Apache-2\.0$", metadata, flags=re.M), metadata[:600]
    assert re.search(r"^License-File: LICENSE$", metadata, flags=re.M), metadata[:600]
    assert (info / "licenses" / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_the_licence_is_apache_2_0_in_full_and_named_where_a_user_reads() -> None:
    """The repository's LICENSE is the Apache License 2.0's own text (its title, its nine sections, its end), and
    pyproject.toml, the README, the docs' home page and the template name it."""
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert [int(n) for n in re.findall(r"^   (\d)\. ", text, flags=re.M)] == list(range(1, 10))
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (project["license"], project["license-files"]) == ("Apache-2.0", ["LICENSE"])
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")], "PEP 639: no classifier"
    for where in ("README.md", "docs/index.md", "templates/gcp-training-jobs/Pulumi.yaml"):
        assert "Apache-2.0" in (ROOT / where).read_text(encoding="utf-8"), where


# --- scripts/release_notes.py -------------------------------------------------------------------------------

def test_the_tags_notes_are_its_changelog_section() -> None:
    code, out, err = run_script(f"v{gcp_training_jobs.__version__}")
    assert (code, err) == (0, "")
    section = CHANGELOG.split(f"## [{gcp_training_jobs.__version__}]", 1)[1].split("\n", 1)[1].split("\n## ", 1)[0]
    assert out == section.strip() + "\n"
    assert "### Added" in out and "## [" not in out


def test_the_newest_version_is_printed() -> None:
    assert run_script("--newest") == (0, gcp_training_jobs.__version__ + "\n", "")


SAMPLE = """\
# Changelog

## [Unreleased]

- not yet

## [1.1.0] - 2026-12-01

### Fixed

- a fix

## [1.0.0] - 2026-11-01

### Added

- the first
"""


def test_a_section_is_cut_at_the_next_heading() -> None:
    assert NOTES.sections(SAMPLE) == {"1.1.0": "### Fixed\n\n- a fix\n", "1.0.0": "### Added\n\n- the first\n"}
    assert NOTES.notes("v1.1.0", SAMPLE, "1.1.0") == "### Fixed\n\n- a fix\n"


@pytest.mark.parametrize(("tag", "text", "version", "says"), [
    ("v1.0.1", SAMPLE, "1.1.0",
     "tag 'v1.0.1' is not the library's version: gcp_training_jobs/jobspec/core/version.py says '1.1.0'"),
    ("1.1.0", SAMPLE, "1.1.0", "tag '1.1.0' is not the library's version"),
    ("v1.2.0", SAMPLE, "1.2.0", "CHANGELOG.md has no section `## [1.2.0] - YYYY-MM-DD`"),
    ("v1.0.0", SAMPLE, "1.0.0", "CHANGELOG.md's newest released section is 1.1.0, not 1.0.0"),
    ("v1.1.0", SAMPLE.replace("### Fixed\n\n- a fix\n", ""), "1.1.0", "CHANGELOG.md's section for 1.1.0 is empty"),
    ("v1.1.0", "# Changelog\n\n## [Unreleased]\n", "1.1.0", "CHANGELOG.md has no section"),
])
def test_a_tag_that_disagrees_is_refused(tag: str, text: str, version: str, says: str) -> None:
    with pytest.raises(NOTES.ReleaseError, match=re.escape(says)):
        NOTES.notes(tag, text, version)


def test_the_script_refuses_a_wrong_tag_with_exit_1_and_a_reason() -> None:
    code, out, err = run_script("v99.0.0")
    assert (code, out) == (1, "")
    assert err.startswith("release_notes.py: tag 'v99.0.0' is not the library's version"), err
    assert run_script()[0] == 2 and run_script("--bogus")[0] == 2


# --- the workflow and CI --------------------------------------------------------------------------------------

def workflow(name: str) -> dict:
    loaded = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    loaded["on"] = loaded.pop(True, loaded.get("on"))  # YAML 1.1 reads the key `on` as true
    return loaded


def test_the_release_workflow_checks_builds_smokes_and_publishes_without_a_token() -> None:
    release = workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    build, publish, github = (release["jobs"][j] for j in ("build", "publish", "github-release"))
    runs = [step.get("run", "") for step in build["steps"]]
    order = ["scripts/release_notes.py \"$GITHUB_REF_NAME\"", "python -m build --no-isolation",
             "twine check --strict", "consumer_program.py"]
    found = [next(i for i, run in enumerate(runs) if what in run) for what in order]
    assert found == sorted(found), runs
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert any(str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@") for s in publish["steps"])
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "secrets." not in text and "password" not in text, "trusted publishing: no token in secrets"
    assert github["needs"] == "publish" and github["permissions"] == {"contents": "write"}
    assert "--notes-file release-notes.md" in github["steps"][-1]["run"]


#: What CI runs before the README's test command, and the review workflow runs too.
BUILD_CHECKS = ("venv/bin/python -m build --no-isolation --outdir dist/", "venv/bin/twine check --strict dist/*",
                "venv/bin/mkdocs build --strict")


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Set up, run the linters and the tests:", 1)[1].split("```", 2)[1]
    return " ".join(block.replace("\\\n", " ").split())


def test_ci_builds_and_checks_the_distributions_before_the_readmes_test_command() -> None:
    # .ci/run quiets pip's progress (--quiet); otherwise its lines are the README's commands as written.
    lines = [line.strip().replace(" --quiet", "") for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.strip().startswith("#")]
    commands = [part.strip() for part in readme_test_command().split("&&")]
    at = [lines.index(command) for command in commands]  # each of the README's commands, as written
    assert at == sorted(at), "the README's commands run in its order"
    for check in BUILD_CHECKS:
        assert check in lines, f".ci/run does not run {check}"
        assert lines.index(check) < lines.index("venv/bin/pytest"), f"{check} runs after the tests"


def test_the_review_workflow_builds_and_checks_the_distributions_too() -> None:
    runs = [step.get("run", "") for job in workflow("pull-request.yml")["jobs"].values() for step in job["steps"]]
    for check in BUILD_CHECKS:
        assert any(check in run for run in runs), check
