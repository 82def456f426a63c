"""`python -m components diff`: a scratch git repository holding the project's program, stacks and trainer, a base
commit and a head that changes the stacks in every way `diff` names, compared offline; each job's figures held to
`plan --stack S --json` run on each side's own checkout."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.diff.command import cmd_diff, diff, exit_code
from gcp_training_jobs.cli.diff.text import MARKER, render_markdown, render_text
from gcp_training_jobs.cli.main import MODULE, parser
from gcp_training_jobs.cli.plan.command import run_plan
from tests.helpers import commit_all, git, offline_review, scratch_project, scratch_review

ROOT = Path(__file__).resolve().parents[1]
#: What plan reads of the project: the program, its declarations, the stacks, the trainer one stack builds.
PROJECT = ("Pulumi.yaml", "__main__.py", "stacks", "trainers/example")

QA = """\
config:
  gcp:project: my-ml-qa
  gcp:region: us-central1
  gcp-training-jobs:jobs:
    big:                      # no source prices a3-ultragpu-8g: its figures are unknown
      jobSpec:
        workerPoolSpecs:
          - machineSpec: {machineType: a3-ultragpu-8g, acceleratorType: NVIDIA_H200_141GB, acceleratorCount: 8}
            replicaCount: 1
            containerSpec: {imageUri: us-central1-docker.pkg.dev/my-ml-qa/trainers/example:0.1}
        scheduling: {timeout: 3600s}
    small:
      jobSpec:
        workerPoolSpecs:
          - machineSpec: {machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}
            replicaCount: 1
            containerSpec: {imageUri: us-central1-docker.pkg.dev/my-ml-qa/trainers/example:0.1}
        scheduling: {strategy: SPOT, timeout: 3600s}
"""

L4_EVAL = """\
    l4-eval:
      labels: {purpose: eval}
      jobSpec:
        workerPoolSpecs:
          - machineSpec: {machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}
            replicaCount: 1
            containerSpec: {imageUri: us-central1-docker.pkg.dev/my-ml-staging/trainers/example:0.1}
        scheduling: {strategy: SPOT, timeout: 3600s}
"""


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@dataclass
class Scratch:
    repo: Path
    base: str
    head: str
    broken: str
    invalid: str
    base_checkout: Path
    document: dict[str, Any]


def _base(repo: Path, guardrail: bool = True) -> None:
    for name in PROJECT:
        source, target = ROOT / name, repo / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if not guardrail:
        return
    # local breaks a guardrail on both sides (each job holds accelerators): kept broken, never the headline
    edit(repo / "stacks/Pulumi.local.yaml", "  gcp-training-jobs:jobs:\n",
         "  gcp-training-jobs:guardrails: {maxAcceleratorsPerJob: 0}\n  gcp-training-jobs:jobs:\n")


def _head(repo: Path) -> None:
    staging = repo / "stacks/Pulumi.staging.yaml"
    edit(staging, "machineType: g2-standard-8", "machineType: g2-standard-24")  # replaced, and
    edit(staging, "acceleratorCount: 1", "acceleratorCount: 2")
    edit(staging, "strategy: SPOT", "strategy: STANDARD")  # breaks spotOnly, which the base kept
    staging.write_text(staging.read_text() + L4_EVAL)  # added
    edit(repo / "stacks/Pulumi.prod.yaml", "maxHourlyUsd: 200 ", "maxHourlyUsd: 250 ")  # updated: the guardrails
    local = repo / "stacks/Pulumi.local.yaml"
    edit(local, "    tpu-v5e:", "    tpu-v5e:\n      protect: true")  # replaced, protected by the job's own flag
    edit(local, "                - --model-dir=${jobDir}\n        scheduling:\n          timeout: 7200s",
         "                - --model-dir=${jobDir}\n                - --steps=10\n        scheduling:\n"
         "          timeout: 7200s")
    text = local.read_text()
    local.write_text(text[:text.index("    tune:")])  # removed (the last job of the file)
    task = repo / "trainers/example/trainer/task.py"  # dev-ai-platform's trainer: its package, so its job, changes
    task.write_text(task.read_text() + "\n# a change to the trainer\n")
    (repo / "stacks/Pulumi.local-ai-platform.yaml").unlink()  # a removed stack
    (repo / "stacks/Pulumi.qa.yaml").write_text(QA)  # an added stack, with an unknown price


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scratch]:
    with scratch_review(tmp_path_factory, "diff") as repo:
        _base(repo)
        base = commit_all(repo, "base")
        _head(repo)
        head = commit_all(repo, "head")
        broken = _side_branch(repo, "broken", "stacks/Pulumi.dev.yaml", "config:\n  gcp:project: [unclosed\n")
        invalid = _side_branch(repo, "invalid", "stacks/Pulumi.qa.yaml",
                               QA.replace("acceleratorCount: 1}", "acceleratorCount: 3}"))
        _side_branch(repo, "no-project", "Pulumi.yaml", "name: [unclosed\n")
        base_checkout = repo.parent / "base-checkout"
        git(repo, "worktree", "add", "-q", "--detach", str(base_checkout), base)
        yield Scratch(repo, base, head, broken, invalid, base_checkout, _diff(base))


def _side_branch(repo: Path, name: str, path: str, text: str) -> str:
    git(repo, "checkout", "-q", "-b", name)
    (repo / path).write_text(text)
    git(repo, "commit", "-qam", name)
    commit = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return commit


def _diff(base: str, head: str | None = None, stacks: list[str] | None = None) -> dict[str, Any]:
    found = diff(base, head, stacks)
    assert isinstance(found, dict), found
    return found


def diff_command(*argv: str) -> int:
    """`python -m components diff ARGS` as the command line parses it, run in this process (main would also close
    the event loop Pulumi's runtime keeps, which the next plan in this process needs)."""
    args = parser().parse_args(["diff", *argv])
    assert args.func.__name__ == "cmd_diff"
    return cmd_diff(args)


def plan_json(checkout: Path, stack: str) -> dict[str, Any]:
    """`python -m components plan --stack STACK --json`, run in that checkout."""
    out = io.StringIO()
    here = Path.cwd()
    os.chdir(checkout)
    try:
        with redirect_stdout(out):
            code = run_plan(stack, None, as_json=True)  # what `plan --stack STACK --json` runs
    finally:
        os.chdir(here)
    assert code in (0, 1), out.getvalue()
    return dict(json.loads(out.getvalue()))


def changes(document: dict[str, Any]) -> dict[str, tuple[str, dict[str, str]]]:
    return {name: (stack["change"], {job: j["change"] for job, j in stack["jobs"].items()})
            for name, stack in document["stacks"].items()}


# --- What changed -----------------------------------------------------------------------------------------


def test_each_stack_and_job_has_the_change_the_provider_would_make(scratch: Scratch) -> None:
    document = scratch.document
    assert document["base"] == scratch.base and document["head"] == "worktree"
    assert changes(document) == {
        "dev": ("unchanged", {"resnet": "unchanged"}),
        "dev-ai-platform": ("changed", {"resnet": "replaced"}),
        "local": ("changed", {"gpu-spot": "unchanged", "tpu-v5e": "replaced", "tune": "removed"}),
        "local-ai-platform": ("removed", {"gpu": "removed", "tpu": "removed"}),
        "prod": ("changed", {"distributed": "updated"}),
        "qa": ("added", {"big": "added", "small": "added"}),
        "staging": ("changed", {"l4-trial": "replaced", "l4-eval": "added"}),
    }
    jobs = {name: stack["jobs"] for name, stack in document["stacks"].items()}
    assert jobs["prod"]["distributed"]["inPlace"] == ["guardrails"]
    assert jobs["prod"]["distributed"]["note"] == "changed in place, no new run: guardrails"
    resnet = jobs["dev-ai-platform"]["resnet"]  # its trainer package's content hash is in its job
    assert resnet["replaces"] == ["job"] and resnet["fields"] == ["trainingInput.packageUris[0]"]
    assert jobs["local"]["tpu-v5e"]["fields"] == ["jobSpec.workerPoolSpecs[0].containerSpec.args"]
    staging = jobs["staging"]["l4-trial"]
    assert staging["note"] == "the next `up` makes a new job and cancels the running one, if it runs"
    assert staging["changes"] == ["1 -> 2 NVIDIA_L4", "machine type g2-standard-8 -> g2-standard-24",
                                  "strategy SPOT -> STANDARD"], "in words, per field; no path the words cover"
    assert jobs["local"]["tpu-v5e"]["changes"] == ["args added --steps=10"], "args said as values, not a path"
    assert resnet["changes"] == ["also changed: trainingInput.packageUris[0]"]
    assert jobs["local"]["tpu-v5e"]["note"].endswith(
        "protected by gcp-training-jobs:jobs.tpu-v5e.protect: `up` refuses while it is queued or running")
    assert jobs["local"]["tune"]["note"] == "the next `up` cancels it, if it runs"


def test_a_head_given_as_a_ref_is_the_working_tree_at_that_commit(scratch: Scratch) -> None:
    document = _diff(scratch.base, scratch.head)
    assert document["head"] == scratch.head
    assert document["stacks"] == scratch.document["stacks"]
    assert git(scratch.repo, "status", "--porcelain") == "", "the user's tree is never written"


def test_what_the_change_asks_of_the_quotas_per_region(scratch: Scratch) -> None:
    staging = scratch.document["stacks"]["staging"]["quota"]["us-central1"]
    assert staging["custom_model_training_nvidia_l4_gpus"] == {"before": 0, "after": 2}  # the trial on demand now
    assert staging["custom_model_training_preemptible_nvidia_l4_gpus"] == {"before": 1, "after": 1}  # eval on Spot
    assert scratch.document["stacks"]["dev-ai-platform"]["quota"] == {}, "AI Platform has no Vertex AI quota"


# --- The figures ------------------------------------------------------------------------------------------


def _plan_figures(plan: dict[str, Any], job: str) -> dict[str, float | None]:
    cost = plan["cost"]["jobs"][job]
    rate = cost["atItsRate"]
    return {"usdPerHour": rate["knownUsdPerHour"] if rate["complete"] else None,
            "worstCaseUsd": cost["worstCaseUsd"]}


def test_every_jobs_figures_are_plan_json_on_its_side(scratch: Scratch) -> None:
    compared = 0
    for side, checkout in (("before", scratch.base_checkout), ("after", scratch.repo)):
        for name, stack in scratch.document["stacks"].items():
            if stack[side] is None:
                continue
            plan = plan_json(checkout, name)
            assert set(plan["cost"]["jobs"]) == {j for j, job in stack["jobs"].items() if job[side] is not None}
            for job_name, job in stack["jobs"].items():
                if job[side] is not None:
                    assert job[side] == _plan_figures(plan, job_name), (side, name, job_name)
                    compared += 1
            rate = plan["cost"]["stack"]["atJobRates"]
            assert stack[side] == {"usdPerHour": rate["knownUsdPerHour"] if rate["complete"] else None,
                                   "worstCaseUsd": plan["cost"]["stack"]["worstCaseUsd"]}, \
                f"{side} {name}: the stack's own totals in its plan, not a sum of its jobs' rounded figures"
            assert stack["guardrails"][side] == plan["guardrails"]["problems"], (side, name)
    assert compared == 18


def test_the_totals_add_up_and_an_unknown_price_stays_unknown(scratch: Scratch) -> None:
    document = scratch.document
    for stack in document["stacks"].values():
        for job in stack["jobs"].values():
            for key, delta, digits in (("usdPerHour", "deltaUsdPerHour", 6), ("worstCaseUsd", "deltaWorstCaseUsd", 2)):
                old = (job["before"] or {key: 0.0})[key]
                new = (job["after"] or {key: 0.0})[key]
                assert job[delta] == (None if old is None or new is None else round(new - old, digits))
        for side in ("before", "after"):
            if stack[side] is None:
                continue
            for key, digits in (("usdPerHour", 6), ("worstCaseUsd", 2)):
                values = [job[side][key] for job in stack["jobs"].values() if job[side] is not None]
                if None in values:
                    assert stack[side][key] is None
                else:  # the plan's own total: the jobs' rounded figures add up to it within their rounding
                    assert stack[side][key] == pytest.approx(sum(values), abs=len(values) * 10 ** -digits / 2)
    qa = document["stacks"]["qa"]
    assert qa["before"] is None and qa["jobs"]["big"]["after"] == {"usdPerHour": None, "worstCaseUsd": None}
    assert qa["jobs"]["small"]["after"]["usdPerHour"] > 0
    assert qa["after"] == {"usdPerHour": None, "worstCaseUsd": None}, "a sum with an unknown part is unknown"
    assert qa["deltaUsdPerHour"] is None and qa["deltaWorstCaseUsd"] is None
    assert document["total"]["deltaUsdPerHour"] is None, "unknown, never counted as 0"
    removed = document["stacks"]["local-ai-platform"]
    assert removed["after"] is None and removed["deltaUsdPerHour"] == -removed["before"]["usdPerHour"]


def test_without_the_unknown_the_whole_change_sums_the_stacks(scratch: Scratch) -> None:
    names = ["dev", "dev-ai-platform", "local", "local-ai-platform", "prod", "staging"]
    document = _diff(scratch.base, None, names)
    assert list(document["stacks"]) == names
    stacks = document["stacks"].values()
    total = document["total"]
    assert total["deltaUsdPerHour"] == round(sum(s["deltaUsdPerHour"] for s in stacks), 6)
    assert total["deltaWorstCaseUsd"] == round(sum(s["deltaWorstCaseUsd"] for s in stacks), 2)
    assert total["deltaUsdPerHour"] == round(total["after"]["usdPerHour"] - total["before"]["usdPerHour"], 6)
    staging = document["stacks"]["staging"]
    assert staging["deltaUsdPerHour"] > 0 and staging["deltaWorstCaseUsd"] > 0
    assert document["stacks"]["prod"]["deltaUsdPerHour"] == 0


# --- Guardrails and exit codes -----------------------------------------------------------------------------


def test_a_guardrail_the_head_breaks_and_the_base_kept_is_the_headline_and_exit_1(scratch: Scratch) -> None:
    staging = scratch.document["stacks"]["staging"]["guardrails"]
    assert staging["before"] == []
    assert staging["broken"] == staging["after"] == [
        "gcp-training-jobs:guardrails.spotOnly: job l4-trial runs as STANDARD (on demand); allowed: "
        "scheduling.strategy SPOT or FLEX_START"]
    local = scratch.document["stacks"]["local"]["guardrails"]
    assert local["before"] and local["after"] and local["broken"] == [], "broken on both sides: kept broken"
    assert exit_code(scratch.document) == 1
    assert exit_code(_diff(scratch.base, None, ["local", "prod"])) == 0


def test_the_command_exits_1_and_prints_the_json(scratch: Scratch, capsys: pytest.CaptureFixture[str]) -> None:
    assert diff_command("--base", scratch.base, "--stack", "staging", "--json") == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["stacks"]["staging"] == scratch.document["stacks"]["staging"]
    assert diff_command("--base", scratch.base, "--stack", "prod") == 0
    text = capsys.readouterr().out
    assert "stack prod: changed" in text and "distributed: updated: changed in place, no new run: guardrails" in text


def test_an_unknown_ref_exits_2_naming_it_without_a_traceback(scratch: Scratch) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "components", "diff", "--base", "no-such-ref"], cwd=scratch.repo,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("no-such-ref: no such branch, tag or commit in the git repository at ")
    assert "Traceback" not in done.stderr and done.stdout == ""
    outside = scratch.repo.parent / "not-a-repository"
    outside.mkdir(exist_ok=True)
    shutil.copy2(ROOT / "Pulumi.yaml", outside / "Pulumi.yaml")
    done = subprocess.run([sys.executable, "-m", "components", "diff", "--base", "main"], cwd=outside, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(f"{outside}: not in a git repository (")


def test_a_broken_file_on_a_side_exits_2_naming_it(scratch: Scratch, capsys: pytest.CaptureFixture[str]) -> None:
    assert diff_command("--base", scratch.base, "--head", "broken", "--markdown") == 2
    out, err = capsys.readouterr()
    assert err.startswith("broken:stacks/Pulumi.dev.yaml:") and "not valid YAML" in err
    assert out.splitlines()[:4] == [MARKER, "### Training jobs: the diff cannot be made for this push", "", "```"]
    assert err.splitlines()[0] in out.splitlines(), "the comment says why, instead of an earlier push's figures"
    assert diff_command("--base", scratch.base, "--head", "invalid", "--stack", "qa") == 2
    err = capsys.readouterr().err
    assert err.startswith("invalid:stacks/Pulumi.qa.yaml: gcp-training-jobs:jobs.small.jobSpec.workerPoolSpecs[0]")
    assert diff_command("--base", "no-project") == 2
    assert capsys.readouterr().err.startswith("no-project:Pulumi.yaml:2:1: not valid YAML")
    assert diff_command("--base", scratch.base, "--stack", "nope") == 2
    assert capsys.readouterr().err.startswith(f"nope: no stack file at {scratch.base} or worktree; available stacks: ")
    assert "Traceback" not in err


# --- The comment ------------------------------------------------------------------------------------------


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def test_the_markdown_carries_the_json_numbers(scratch: Scratch) -> None:
    document = scratch.document
    markdown = render_markdown(document)
    lines = markdown.splitlines()
    assert lines[0] == MARKER == "<!-- gcp-training-jobs:diff -->"
    headline = lines[1]
    assert headline.startswith("### Training jobs: unknown at the jobs' rates, worst case unknown; ")
    assert headline.endswith("; breaks spotOnly in staging")
    rows = {tuple(cell.strip("* ") for cell in line.strip("|").split(" | ")[:2]): line
            for line in lines if line.startswith("| ") and " -> " in line}
    for name, stack in document["stacks"].items():
        if stack["change"] == "unchanged":
            assert f"#### {name}:" not in markdown
            continue
        assert f"#### {name}: {stack['change']}" in lines
        kept = [job for job in stack["jobs"].values() if job["change"] == "unchanged"]
        if kept:  # the unchanged jobs in one row, their $/h and worst case
            hourly = sum(job["after"]["usdPerHour"] for job in kept)
            worst = sum(job["after"]["worstCaseUsd"] for job in kept)
            assert f"| {len(kept)} unchanged | — | ${hourly:,.2f}/h | {_usd(worst)} |" in lines, name
        for job_name, job in [*((n, j) for n, j in stack["jobs"].items() if j["change"] != "unchanged"),
                              (name, stack)]:
            row = rows[(job_name, job["change"])]
            hourly, worst = row.split(" | ")[2:4]
            for cell, key, delta in ((hourly, "usdPerHour", "deltaUsdPerHour"),
                                     (worst, "worstCaseUsd", "deltaWorstCaseUsd")):
                shown = re.findall(r"(unknown|—|[+-]?\$[\d,]+\.\d\d|±\$0)", cell)
                before = "—" if job["before"] is None else _usd(job["before"][key])
                after = "—" if job["after"] is None else _usd(job["after"][key])
                change = job[delta]
                signed = "unknown" if change is None else "±$0" if change == 0 else (
                    ("+" if change > 0 else "-") + _usd(abs(change)))
                assert shown == [before, after, signed], (name, job_name, cell)
    assert "**Guardrails staging breaks (the base kept them):**" in lines
    assert "- gcp-training-jobs:guardrails.spotOnly: job l4-trial runs as STANDARD (on demand); allowed: " \
           "scheduling.strategy SPOT or FLEX_START" in lines
    assert "<details><summary>Per-part lines</summary>" in lines and lines.count("</details>") == 1
    assert "- `staging` / `l4-trial` (after): 1 x g2-standard-24 (machine, its accelerators included): " in markdown


def test_the_text_form_names_every_stack_and_the_broken_guardrail(scratch: Scratch) -> None:
    text = render_text(scratch.document)
    for name, stack in scratch.document["stacks"].items():
        if stack["change"] != "unchanged":
            assert f"stack {name}: {stack['change']}" in text
    assert "\n1 stack unchanged: dev\n" in text and "stack dev:" not in text, "the unchanged stacks in one line"
    assert "    1 unchanged, $" in text, "local's unchanged job in one line"
    assert "    breaks (the base kept it): gcp-training-jobs:guardrails.spotOnly: job l4-trial" in text
    assert "    big: added: the next `up` starts it\n        $/h — -> unknown (unknown); worst case — -> unknown " \
           "(unknown)" in text


def test_the_docs_comment_is_what_diff_prints_for_its_change(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/gitops.md "The pull request comment" (rendered, and as markdown, from docs/snippets/pr-comment.md): the
    trial on a g2-standard-24 with 2 L4s on demand, and an eval job."""
    shown = (ROOT / "docs" / "snippets" / "pr-comment.md").read_text().removesuffix("\n")
    page = (ROOT / "docs" / "gitops.md").read_text()
    assert page.count('--8<-- "docs/snippets/pr-comment.md"') == 2, "the page shows the comment and its markdown"
    repo = tmp_path / "repo"
    repo.mkdir()
    for key in [k for k in os.environ if k.startswith("PULUMI_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GCP_TRAINING_JOBS_BUILD_DIR", str(tmp_path / "build"))
    git(repo, "init", "-q", "-b", "main")
    _base(repo, guardrail=False)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    staging = repo / "stacks/Pulumi.staging.yaml"
    edit(staging, "machineType: g2-standard-8", "machineType: g2-standard-24")
    edit(staging, "acceleratorCount: 1", "acceleratorCount: 2")
    edit(staging, "strategy: SPOT", "strategy: STANDARD")
    staging.write_text(staging.read_text() + L4_EVAL)
    monkeypatch.chdir(repo)
    printed = render_markdown(_diff("main"), MODULE)  # as `python -m components diff --markdown` prints it
    same_commits = re.compile(r"^Base `[0-9a-f]+`, head `[0-9a-z]+`", re.MULTILINE)
    assert same_commits.sub("Base, head", printed) == same_commits.sub("Base, head", shown)


def test_online_holds_each_changed_stack_against_the_quotas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            emulator: Any) -> None:
    """--online: the head's changed stacks held against the project's quotas as `plan --online` holds them (here
    the emulator's Service Usage and its live jobs), an excess exit 1."""
    from tests.helpers import control

    L4 = "custom_model_training_nvidia_l4_gpus"  # noqa: N806 - the metric the emulator's quota names

    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy2(ROOT / name, repo / name)
    for key in [k for k in os.environ if k.startswith(("PULUMI_", "GCP_TRAINING_JOBS_API")) or "PROXY" in k.upper()]:
        monkeypatch.delenv(key)  # the emulator is on the loopback: no proxy in the way
    monkeypatch.setenv("GCP_TRAINING_JOBS_BUILD_DIR", str(tmp_path / "build"))
    job = {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/t/train:1"}}]}}
    config = {"gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:apiEndpoint": emulator.url,
              "gcp-training-jobs:enableApis": False,
              "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"}}
    stack = repo / "stacks/Pulumi.q.yaml"
    stack.write_text(json.dumps({"config": {**config, "gcp-training-jobs:jobs": {"a": job}}}))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    stack.write_text(json.dumps({"config": {**config, "gcp-training-jobs:jobs": {"a": job, "b": job, "c": job}}}))
    monkeypatch.chdir(repo)
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 2})
    offline = _diff("main")
    assert "online" not in offline["stacks"]["q"] and exit_code(offline) == 0
    assert offline["stacks"]["q"]["quota"] == {"us-central1": {L4: {"before": 1, "after": 3}}}
    over = diff("main", None, online=True)
    assert isinstance(over, dict) and exit_code(over) == 1
    (problem,) = over["stacks"]["q"]["online"]["problems"]  # a and b fit the 2; c, the third, is named alone
    assert problem.startswith(f"job c: quota aiplatform.googleapis.com/{L4} in us-central1: c needs 1, the stack's "
                              "earlier new jobs there take 2, live jobs hold 0, the limit is 2 (3 > 2)")
    assert "over quota: job c: quota aiplatform.googleapis.com/" in render_markdown(over)
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 4})
    fits = diff("main", None, online=True)
    assert isinstance(fits, dict) and exit_code(fits) == 0
    assert fits["stacks"]["q"]["online"]["lines"][0] == \
        "Quotas (Vertex AI custom training, project my-proj, us-central1): all hold"


def test_a_comment_too_long_for_github_leaves_the_per_part_lines_out(scratch: Scratch,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.cli.diff import text as diff_text

    full = render_markdown(scratch.document)
    monkeypatch.setattr(diff_text, "MAX_COMMENT", len(full) - 1)
    short = render_markdown(scratch.document)
    assert "<details>" in full and "<details>" not in short
    assert short.endswith("characters; `gcp-training-jobs diff` prints them.)")
    total = "\n**Total of the changed stacks"
    assert total in full and short.split(total)[0] == full.split(total)[0], "the tables stay"


@pytest.mark.parametrize("run_as", ["gcp-training-jobs", MODULE])
def test_the_comment_names_the_command_as_it_was_run(scratch: Scratch, monkeypatch: pytest.MonkeyPatch,
                                                      run_as: str) -> None:
    """The installed command's comment says `gcp-training-jobs diff`, a checkout's `python -m components diff`:
    the name the command line was parsed under, what a reviewer runs to see the same (the full lines too)."""
    from gcp_training_jobs.cli.diff import text as diff_text

    args = parser(run_as).parse_args(["diff", "--base", "main", "--markdown"])
    comment = render_markdown(scratch.document, args.program)
    assert f"; offline (`{run_as} diff`), each job" in comment
    monkeypatch.setattr(diff_text, "MAX_COMMENT", len(comment) - 1)
    assert render_markdown(scratch.document, args.program).endswith(f"characters; `{run_as} diff` prints them.)")


def staging_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of the program and the `staging` stack file, its one commit on `main`, no PULUMI_* variables."""
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "stacks/Pulumi.staging.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    for key in [k for k in os.environ if k.startswith("PULUMI_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GCP_TRAINING_JOBS_BUILD_DIR", str(tmp_path / "build"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def test_each_side_finds_its_stacks_where_its_own_pulumi_yaml_says(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The head moves the stack files (stackConfigDir stacks -> envs): the base's are found in its stacks/, the
    head's in envs/, and the same stack is unchanged."""
    repo = staging_repo(tmp_path, monkeypatch)
    git(repo, "mv", "stacks", "envs")
    edit(repo / "Pulumi.yaml", "stackConfigDir: stacks", "stackConfigDir: envs")
    monkeypatch.chdir(repo)
    document = _diff("main")
    assert changes(document) == {"staging": ("unchanged", {"l4-trial": "unchanged"})}
    assert document["total"] == {"before": {"usdPerHour": 0.0, "worstCaseUsd": 0.0},
                                 "after": {"usdPerHour": 0.0, "worstCaseUsd": 0.0},
                                 "deltaUsdPerHour": 0.0, "deltaWorstCaseUsd": 0.0, "stacks": []}
    every = document["allStacks"]
    assert every["before"] == every["after"] and every["before"]["usdPerHour"] > 0, "labelled all stacks, unchanged"


def test_a_bucket_that_must_move_is_said_replaced_with_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack's region moves its buckets' location, which a bucket cannot change in place: the diff says which
    are replaced and why (and that a bucket holding objects cannot be deleted), not merely "changed"."""
    repo = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    text = ("config:\n  gcp:project: my-proj\n  gcp-training-jobs:backend: vertex\n  gcp-training-jobs:region: {r}\n"
            "  gcp-training-jobs:labels: {{team: {t}}}\n  gcp-training-jobs:jobs: {{}}\n")
    (repo / "stacks/Pulumi.pr.yaml").write_text(text.format(r="us-central1", t="a"))
    base = commit_all(repo, "base")
    (repo / "stacks/Pulumi.pr.yaml").write_text(text.format(r="us-east4", t="a"))
    monkeypatch.chdir(repo)
    document = diff(base, None, ["pr"])
    assert isinstance(document, dict), document
    resources = document["stacks"]["pr"]["resources"]
    assert resources["replaced"] and all(
        "its location US-CENTRAL1 -> US-EAST4: the next `up` deletes it and makes it again (with forceDestroy false, "
        "that fails while it holds objects)" in line for line in resources["replaced"]), resources
    assert not any(line.startswith("Bucket") for line in resources["changed"]), resources
    assert f"replaced {resources['replaced'][0]}" in render_text(document)
    (repo / "stacks/Pulumi.pr.yaml").write_text(text.format(r="us-central1", t="b"))  # a label: in place
    labels = diff(base, None, ["pr"])
    assert isinstance(labels, dict)
    assert labels["stacks"]["pr"]["resources"]["replaced"] == []
    assert any(line.startswith("Bucket") for line in labels["stacks"]["pr"]["resources"]["changed"])


def test_a_stack_moving_its_jobs_to_the_package_is_said_so_with_no_new_run(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`jobResource: package` on the head: each job is the same run, moved to the package's resource (an update in
    place that only reads it), not a change of any input; the package's provider is none of the other resources."""
    repo = staging_repo(tmp_path, monkeypatch)
    with (repo / "stacks/Pulumi.staging.yaml").open("a") as stack:
        stack.write("  gcp-training-jobs:jobResource: package\n")
    monkeypatch.chdir(repo)
    document = _diff("main")
    (job,) = document["stacks"]["staging"]["jobs"].values()
    assert job["change"] == "updated" and job["inPlace"] == ["resource type"], job
    assert job["note"] == "moves to the provider package's resource (gcp-training-jobs:jobResource), the job only read"
    assert "replaces" not in job and job["deltaUsdPerHour"] == 0.0
    assert not any(document["stacks"]["staging"]["resources"].values()), document["stacks"]["staging"]["resources"]
