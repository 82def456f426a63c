"""The GitHub workflows, this repository's and the template's, as a pull request could abuse them: no job a
`pull_request` (or `pull_request_target`) event starts holds an OIDC token, a secret or the stacks' passphrase
outside a protected `environment:`; every job says its own permissions (the workflow's default is none or read);
checkouts keep no credential unless the job pushes; every action is pinned by a full commit SHA with its tag in a
comment, and Dependabot moves them; the deploy's path filter deploys a change of the library; the comment job runs no
code of the pull request and renders its artifact as untrusted text (run with Node, as github-script runs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_WORKFLOWS = ROOT / "templates" / "gcp-training-jobs" / ".github" / "workflows"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(TEMPLATE_WORKFLOWS.glob("*.yml"))
PULL_REQUEST_EVENTS = {"pull_request", "pull_request_target"}
#: What a job on a pull request may never hold outside a protected environment.
CREDENTIALS = re.compile(r"secrets\.|PULUMI_CONFIG_PASSPHRASE|id-token")
SHA_PIN = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
#: The environment every pull request job that needs the cloud runs in (required reviewers, docs/gitops.md).
PREVIEW_ENVIRONMENT = "preview"


def load(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text())
    loaded["on"] = loaded.pop(True, loaded.get("on"))  # YAML 1.1 reads the key `on` as true
    return loaded


def events(workflow: dict[str, Any]) -> set[str]:
    on = workflow["on"]
    return {on} if isinstance(on, str) else set(on)


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", WORKFLOWS, ids=name)
def test_no_job_on_a_pull_request_holds_a_credential_outside_a_protected_environment(path: Path) -> None:
    workflow = load(path)
    if not events(workflow) & PULL_REQUEST_EVENTS:
        return
    assert "env" not in workflow or not CREDENTIALS.search(json.dumps(workflow["env"])), name(path)
    assert not CREDENTIALS.search(json.dumps(workflow.get("permissions") or {})), name(path)
    for job_name, job in workflow["jobs"].items():
        text = json.dumps(job)
        if job.get("environment") == PREVIEW_ENVIRONMENT:
            assert job["permissions"].get("pull-requests") in (None, "read"), f"{name(path)}: {job_name}"
            assert job["permissions"].get("contents") in (None, "read"), f"{name(path)}: {job_name}"
            continue
        assert not CREDENTIALS.search(text), f"{name(path)}: {job_name} holds {CREDENTIALS.search(text)}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=name)
def test_every_job_asks_for_its_own_least_permissions(path: Path) -> None:
    workflow = load(path)
    assert workflow.get("permissions") in ({}, {"contents": "read"}), f"{name(path)}: the workflow's default"
    for job_name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{name(path)}: {job_name} says no permissions of its own"
        granted = job["permissions"]
        assert all(level in ("read", "write", "none") for level in granted.values()), f"{name(path)}: {job_name}"
        if granted.get("id-token") == "write":  # an OIDC token only where a credential is exchanged
            assert job.get("environment"), f"{name(path)}: {job_name} gets an OIDC token outside an environment"
            assert any("auth@" in str(s.get("uses", "")) or "pypi-publish@" in str(s.get("uses", ""))
                       for s in job["steps"]), f"{name(path)}: {job_name}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=name)
def test_checkouts_keep_no_credential_and_every_action_is_pinned_by_commit(path: Path) -> None:
    lines = path.read_text().splitlines()
    uses = [line for line in lines if re.match(r"^\s*(- )?uses:", line)]
    assert uses, name(path)
    for line in uses:
        reference, _, comment = line.split("uses:", 1)[1].strip().partition(" # ")
        assert SHA_PIN.match(reference), f"{name(path)}: {reference} is not pinned by a full commit SHA"
        assert re.fullmatch(r"v\d+(\.\d+)*", comment.strip()), f"{name(path)}: {reference} names no tag"
    for job_name, job in load(path)["jobs"].items():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert (step.get("with") or {}).get("persist-credentials") is False, f"{name(path)}: {job_name}"


def test_one_tag_one_commit_across_every_workflow() -> None:
    """An action used at one tag is pinned to the same commit everywhere (Dependabot moves them together)."""
    pinned: dict[str, set[str]] = {}
    for path in WORKFLOWS:
        for reference, tag in re.findall(r"uses:\s*(\S+@[0-9a-f]{40})\s+#\s+(\S+)", path.read_text()):
            pinned.setdefault(f"{reference.split('@')[0]} {tag}", set()).add(reference)
    assert pinned and all(len(commits) == 1 for commits in pinned.values()), pinned


def test_dependabot_keeps_the_actions_of_both_workflow_folders_and_the_locks_current() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    by_ecosystem = {update["package-ecosystem"]: update for update in config["updates"]}
    actions = by_ecosystem["github-actions"]
    assert set(actions["directories"]) == {"/", "/templates/gcp-training-jobs"}
    assert by_ecosystem["pip"]["directory"] == "/"


def test_the_pull_request_preview_waits_for_the_protected_environment_and_comments_nothing() -> None:
    for path in (ROOT / ".github" / "workflows" / "pull-request.yml", TEMPLATE_WORKFLOWS / "pull-request.yml"):
        preview = load(path)["jobs"]["preview"]
        assert preview["environment"] == PREVIEW_ENVIRONMENT and preview["needs"] == "offline"
        assert preview["permissions"] == {"contents": "read", "id-token": "write"}
        pulumi = next(s for s in preview["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@"))
        assert pulumi["with"]["command"] == "preview" and pulumi["with"].get("comment-on-summary") is True
        assert "comment-on-pr" not in pulumi["with"] and "github-token" not in pulumi["with"]


def test_the_comment_job_runs_no_code_of_the_pull_request() -> None:
    scripts = []
    for path in (ROOT / ".github" / "workflows" / "pull-request.yml", TEMPLATE_WORKFLOWS / "pull-request.yml"):
        comment = load(path)["jobs"]["comment"]
        assert comment["permissions"] == {"pull-requests": "write"}
        uses = [str(s.get("uses", "")).split("@")[0] for s in comment["steps"]]
        assert uses == ["actions/download-artifact", "actions/github-script"]  # no checkout, no run: step
        assert not any("run" in s for s in comment["steps"])
        scripts.append(comment["steps"][1]["with"]["script"])
    assert scripts[0] == scripts[1], "the template's comment job is this repository's"


def deploy_filter(path: Path) -> tuple[str, str]:
    deploy = load(path)
    which = next(s for s in deploy["jobs"]["changed"]["steps"] if s.get("id") == "which")["run"]
    stack_pattern = re.search(r'grep -qE "\$SHARED_PATHS\|([^"]+)"', which)
    assert stack_pattern, which
    return deploy["env"]["SHARED_PATHS"], stack_pattern.group(1)


def deploys(path: Path, changed: str, stack: str) -> bool:
    shared, own = deploy_filter(path)
    return bool(re.search(shared, changed) or re.search(own.replace("$stack", stack), changed))


@pytest.mark.parametrize(("changed", "expected"), [
    ("gcp_training_jobs/resources/budget.py", True), ("gcp_training_jobs/jobspec/catalog/prices.py", True),
    ("pyproject.toml", True), ("requirements.txt", True), ("requirements-dev.txt", True), ("__main__.py", True),
    ("Pulumi.yaml", True), ("components/__init__.py", True), ("policies/analyzer/__main__.py", True),
    ("trainers/l4/task.py", True), ("stacks/Pulumi.prod.yaml", True), ("stacks/Pulumi.dev.yaml", False),
    ("docs/gitops.md", False), ("tests/test_budget.py", False), ("README.md", False),
])
def test_deploy_runs_when_the_library_the_program_or_the_locks_change(changed: str, expected: bool) -> None:
    assert deploys(ROOT / ".github" / "workflows" / "deploy.yml", changed, "prod") is expected


@pytest.mark.parametrize(("changed", "expected"), [
    ("acme_ml/features.py", True), ("__main__.py", True), ("requirements.txt", True), ("Pulumi.yaml", True),
    ("trainers/l4/task.py", True), ("stacks/Pulumi.dev.yaml", True), ("stacks/Pulumi.prod.yaml", False),
    ("README.md", False),
])
def test_the_template_deploys_when_the_team_s_package_or_the_library_s_pin_changes(changed: str,
                                                                                    expected: bool) -> None:
    assert deploys(TEMPLATE_WORKFLOWS / "deploy.yml", changed, "dev") is expected


def test_only_the_deploy_job_gets_an_oidc_token() -> None:
    for path in (ROOT / ".github" / "workflows" / "deploy.yml", TEMPLATE_WORKFLOWS / "deploy.yml"):
        jobs = load(path)["jobs"]
        assert {n for n, j in jobs.items() if j["permissions"].get("id-token") == "write"} == {"up"}, name(path)
        assert jobs["up"]["environment"] == "${{ matrix.stack }}"


def test_the_dependency_job_that_runs_unlocked_releases_cannot_write() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "dependencies.yml")["jobs"]
    assert jobs["newest"]["permissions"] == {"contents": "read"}
    runs = " ".join(s.get("run", "") for s in jobs["newest"]["steps"])
    assert "check-latest-deps.sh" in runs and "GH_TOKEN" not in json.dumps(jobs["newest"])
    opener = jobs["pull-request"]
    assert opener["permissions"] == {"contents": "write", "pull-requests": "write"}
    opener_runs = " ".join(s.get("run", "") for s in opener["steps"])
    assert "check-latest-deps" not in opener_runs and "pip install" not in opener_runs and "pytest" not in opener_runs
    assert "mypy\" gcp_training_jobs " in (ROOT / "scripts" / "check-latest-deps.sh").read_text()


def test_the_template_runs_the_installed_command_from_the_project_folder() -> None:
    for path in TEMPLATE_WORKFLOWS.glob("*.yml"):
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                run = step.get("run", "")
                if "gcp-training-jobs " in run:
                    assert "venv/bin/gcp-training-jobs" in run and "python -m components" not in run
                    assert "working-directory" not in step and not re.search(r"(^|\s)cd\s", run), run


# --- the comment job's rendering, run as github-script runs it ----------------------------------------------------

HOSTILE = ("<!-- gcp-training-jobs:diff -->\n### Training jobs: 1 changed\n\n"
           "| job | change |\n|---|---|\n| `train` | args `--lr=0.1` -> `--lr=0.2` |\n"
           "<details><summary>more</summary>\n\nfine\n</details>\n"
           "<img src=x onerror=alert(1)> </details><details open> <a href=\"https://evil.example\">click</a>\n"
           "![tracker](https://evil.example/p.png) [link](https://evil.example) www.evil.example "
           "@everyone @org/team\n")


def render_comment(tmp_path: Path, artifact: str | None) -> list[tuple[str, Any]]:
    """The comment job's script run by Node with github-script's objects stubbed: the calls it makes."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the comment job's script (JavaScript) cannot be run")
    script = load(ROOT / ".github" / "workflows" / "pull-request.yml")["jobs"]["comment"]["steps"][1]["with"]["script"]
    if artifact is not None:
        (tmp_path / "diff.md").write_text(artifact)
    harness = """
const calls = [];
const core = { warning: (m) => calls.push(['warning', m]) };
const context = { repo: { owner: 'o', repo: 'r' }, payload: { pull_request: { number: 7 } } };
const github = {
  paginate: async () => [],
  rest: { issues: { listComments: null,
    createComment: async (a) => calls.push(['create', a.body]),
    updateComment: async (a) => calls.push(['update', a.body]) } } };
(async () => { SCRIPT
})().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(3); });
""".replace("SCRIPT", script)
    done = subprocess.run([node, "-e", harness], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [tuple(call) for call in json.loads(done.stdout)]


def test_the_comment_keeps_the_diff_s_markdown_and_renders_nothing_a_stack_file_wrote(tmp_path: Path) -> None:
    (call, body), = render_comment(tmp_path, HOSTILE)
    assert call == "create" and body.startswith("<!-- gcp-training-jobs:diff -->\n### Training jobs: 1 changed")
    assert "| `train` | args `--lr=0.1` -> `--lr=0.2` |" in body  # the diff's own markdown, as it was
    assert "<details><summary>more</summary>" in body and "</details>" in body
    tags = re.findall(r"<(?!!-- gcp-training-jobs:diff -->)[^>]*>", body)
    assert set(tags) <= {"<details>", "</details>", "<summary>", "</summary>"}, tags
    assert "<details open>" not in body and "<img" not in body and "<a " not in body
    assert not re.search(r"!\[|\]\(|https?://|www\.", body)  # no image, link or autolink left to render
    assert not re.search(r"@[A-Za-z]", body)  # no mention notifies


def test_no_artifact_or_one_without_the_marker_posts_nothing(tmp_path: Path) -> None:
    assert render_comment(tmp_path, None) == [("warning", "no diff to post (see the offline job)")]
    assert render_comment(tmp_path, "@everyone look") == [("warning", "no diff to post (see the offline job)")]
    (call, body), = render_comment(tmp_path, "<!-- gcp-training-jobs:diff -->" + "x" * 100_000)
    assert call == "create" and len(body) <= 65_000
