"""The review in a reviewer's words: a changed job's fields said per field (`cli/diff/words.py`), where each job runs
(`cli/plan/placement.py`: the reservation and the machines it needs from it, the persistent resource, non-default
disks, fallbacks in order with their prices) in `plan`, its JSON and `diff`, and the diff's totals over what the
comment shows (a scratch git repository with three stacks, one changed)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.diff.command import diff
from gcp_training_jobs.cli.diff.text import render_markdown, render_text
from gcp_training_jobs.cli.diff.words import words
from gcp_training_jobs.cli.plan.command import run_plan
from gcp_training_jobs.cli.plan.placement import placement_lines, placement_of
from gcp_training_jobs.resources.settings.stack_file import load_stack_file
from tests.helpers import commit_all, scratch_review

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "us-central1-docker.pkg.dev/my-proj/trainers/llm"
RESERVATION = "projects/my-proj/zones/us-central1-a/reservations/h100s"


def reserved(machines: int, was: int | None = None, name: str = RESERVATION) -> str:
    """The words for a reservation need, with what it was, then its affinity as plan says it (type and name)."""
    short = name.rsplit("/", 1)[-1]
    return f"needs {machines} a3-highgpu-8g from reservation {short}" + (f", was {was}" if was is not None else "") + (
        f" (SPECIFIC_RESERVATION {name})")


def job(workers: int = 0, tag: str = "1.0", timeout: str = "3600s", strategy: str | None = None,
        machine: str = "a3-highgpu-8g", accelerator: str = "NVIDIA_H100_80GB", reservation: str | None = RESERVATION,
        disk: dict[str, Any] | None = None, resource: str | None = None, args: list[str] | None = None,
        fallbacks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    machine_spec: dict[str, Any] = {"machineType": machine, "acceleratorType": accelerator, "acceleratorCount": 8}
    if reservation:
        machine_spec["reservationAffinity"] = {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                               "key": "compute.googleapis.com/reservation-name",
                                               "values": [reservation]}
    pool: dict[str, Any] = {"machineSpec": machine_spec, "replicaCount": 1,
                            "containerSpec": {"imageUri": f"{IMAGE}:{tag}", **({"args": args} if args else {})}}
    if disk:
        pool["diskSpec"] = disk
    pools = [pool] + ([{**pool, "replicaCount": workers}] if workers else [])  # the workers: a second pool
    spec: dict[str, Any] = {"workerPoolSpecs": pools,
                            "scheduling": {"timeout": timeout, **({"strategy": strategy} if strategy else {})}}
    if resource:
        spec["persistentResourceId"] = resource
    return {"jobSpec": spec, **({"fallbacks": fallbacks} if fallbacks else {})}


L4 = {"jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
    "replicaCount": 1, "containerSpec": {"imageUri": f"{IMAGE}:1.0"}}], "scheduling": {"timeout": "3600s"}}}
#: The prod job as the base has it: 8 H100s from reservation h100s, a 500 GB pd-standard disk, a Spot fallback.
LLM = job(disk={"bootDiskType": "pd-standard", "bootDiskSizeGb": 500}, fallbacks=[{"scheduling": {"strategy": "SPOT"}}])


def stack(jobs: dict[str, Any], region: str = "us-central1") -> str:
    """A stack file of `jobs` (a credential written plainly allowed: the words are what is tested here; the refusal is
    tests/test_credentials.py's)."""
    return json.dumps({"config": {"gcp:project": "my-proj", "gcp:region": region, "gcp-training-jobs:backend": "vertex",
                                  "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
                                  "gcp-training-jobs:plaintextCredentials": "allow",
                                  "gcp-training-jobs:jobs": jobs}})


def facts_pair(tmp_path: Path, old: dict[str, Any], new: dict[str, Any], regions: tuple[str, str] = ("us-central1",
               "us-central1")) -> tuple[Any, Any]:
    """The job `j` as each of two stack files judges it (JobSettings)."""
    found = []
    for side, spec, region in (("old", old, regions[0]), ("new", new, regions[1])):
        path = tmp_path / f"Pulumi.{side}.yaml"
        path.write_text(stack({"j": spec}, region))
        found.append(load_stack_file(path, root=ROOT).jobs["j"])
    return found[0], found[1]


def said(tmp_path: Path, old: dict[str, Any], new: dict[str, Any], paths: list[str] | None = None,
         regions: tuple[str, str] = ("us-central1", "us-central1")) -> list[str]:
    before, after = facts_pair(tmp_path, old, new, regions)
    return words(before.facts, after.facts, paths or [],
                 (placement_of(before, "j"), placement_of(after, "j")), (old, new))


# --- Each field in words -----------------------------------------------------------------------------------


def test_accelerators_replicas_and_the_reservation_need_in_words(tmp_path: Path) -> None:
    assert said(tmp_path, job(workers=1), job(workers=2)) == [
        "16 -> 24 NVIDIA_H100_80GB", "pool 1 replicas 1 -> 2", reserved(3, 2)]
    assert said(tmp_path, job(), job(workers=1)) == [
        "8 -> 16 NVIDIA_H100_80GB", "pool 1 added: a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB", reserved(2, 1)]


def test_a_new_accelerator_type_and_machine_type(tmp_path: Path) -> None:
    assert said(tmp_path, job(reservation=None), job(machine="a2-ultragpu-8g", accelerator="NVIDIA_A100_80GB",
                                                     reservation=None)) == [
        "8 NVIDIA_H100_80GB -> 8 NVIDIA_A100_80GB", "machine type a3-highgpu-8g -> a2-ultragpu-8g"]


def test_strategy_timeout_and_image_tag(tmp_path: Path) -> None:
    assert said(tmp_path, job(reservation=None), job(reservation=None, strategy="SPOT", timeout="7200s",
                                                     tag="1.1")) == [
        "strategy STANDARD -> SPOT", "timeout 1 h -> 2 h", "image llm 1.0 -> 1.1"]


def test_region(tmp_path: Path) -> None:
    assert said(tmp_path, job(reservation=None), job(reservation=None), regions=("us-central1", "us-east4")) == [
        "region us-central1 -> us-east4"]


def test_leaving_the_reservation_for_a_persistent_resource(tmp_path: Path) -> None:
    assert said(tmp_path, job(), job(reservation=None, resource="my-pool")) == [
        "persistent resource none (its own machines) -> my-pool", reserved(0, 1)]


def test_a_few_lines_at_most_and_the_reservation_need_always(tmp_path: Path) -> None:
    assert said(tmp_path, job(), job(workers=1, tag="1.1", timeout="7200s", strategy="SPOT",
                                     fallbacks=[{"scheduling": {"strategy": "STANDARD"}}])) == [
        "8 -> 16 NVIDIA_H100_80GB", "pool 1 added: a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB", "strategy STANDARD -> SPOT",
        "timeout 1 h -> 2 h", "and 2 more", reserved(2, 1)]


def test_the_rest_as_the_paths_that_changed_and_the_fallbacks(tmp_path: Path) -> None:
    paths = ["jobSpec.workerPoolSpecs[0].containerSpec.args", "jobSpec.workerPoolSpecs[0].machineSpec.machineType"]
    head = job(args=["--steps=10"], fallbacks=[{"scheduling": {"strategy": "SPOT"}}])
    (spot,) = placement_of(facts_pair(tmp_path, job(), head)[1], "j")["fallbacks"]
    assert said(tmp_path, job(), head, paths) == [
        "args added --steps=10",
        f"fallback 1 added: us-central1, a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB, SPOT, ${spot['usdPerHour']:,.2f}/h"], \
        "the args as values; a path the words say is not repeated"


def test_args_command_and_env_as_values_each_credential_masked(tmp_path: Path) -> None:
    first = "jobSpec.workerPoolSpecs[0].containerSpec"
    assert said(tmp_path, job(args=["--epochs=5", "--lr=0.1"]), job(args=["--epochs=10", "--lr=0.1"]),
                [f"{first}.args[0]"]) == ["args --epochs=5 -> --epochs=10"]
    assert said(tmp_path, job(args=["--epochs=5"]), job(args=["--epochs=5", "--resume"]), [f"{first}.args"]) == [
        "args added --resume"]
    token = "ghp_" + "a1B2" * 9
    old, new = job(args=["--epochs=5"]), job(args=["--epochs=5"])
    container = new["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    container["command"] = ["python", "-m", "train"]
    container["env"] = [{"name": "GH_TOKEN", "value": token}, {"name": "SEED", "value": "1"}]
    old["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"] = [{"name": "SEED", "value": "0"},
                                                                     {"name": "DEBUG", "value": "1"}]
    lines = said(tmp_path, old, new, [f"{first}.command", f"{first}.env"])
    assert lines == ["command added python -m train", "env SEED 0 -> 1", "env DEBUG removed",
                     "env GH_TOKEN=<GitHub personal access token, not shown> added"]
    assert token not in repr(lines)


def test_a_boot_disk_and_no_words_leaves_every_path(tmp_path: Path) -> None:
    disk = "jobSpec.workerPoolSpecs[0].diskSpec"
    assert said(tmp_path, job(), job(disk={"bootDiskType": "pd-standard", "bootDiskSizeGb": 500}), [disk]) == [
        "pool 0 disk the default -> pd-standard 500 GB"]
    assert said(tmp_path, job(), job(disk={"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}), [disk]) == [
        f"also changed: {disk}"], "Vertex's default written out: the path, since no word says it"


def test_where_a_job_runs_as_data(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(stack({"llm": LLM, "pr": job(reservation=None, resource="my-pool")}))
    jobs = load_stack_file(path, root=ROOT).jobs
    llm = placement_of(jobs["llm"], "llm")
    assert llm["reservations"] == [{"type": "SPECIFIC_RESERVATION", "name": RESERVATION,
                                    "machineType": "a3-highgpu-8g", "machines": 1}]
    assert llm["persistentResource"] is None
    assert llm["disks"] == [{"pool": 0, "path": "jobSpec.workerPoolSpecs[0]", "bootDiskType": "pd-standard",
                             "bootDiskSizeGb": 500}]
    (spot,) = llm["fallbacks"]
    assert spot["region"] == "us-central1" and spot["strategy"] == "SPOT" and spot["machineTypes"] == ["a3-highgpu-8g"]
    assert spot["machine"] == "a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB" and spot["usdPerHour"] > 0
    assert spot["text"] == f"us-central1, a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB, SPOT, ${spot['usdPerHour']:,.2f}/h"
    assert placement_of(jobs["pr"], "pr") == {"reservations": [], "persistentResource": "my-pool", "disks": [],
                                              "fallbacks": []}


# --- plan and diff over three stacks, one changed ------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """prod (an H100 job on a reservation and an L4 job), staging and dev (an L4 job each); the head doubles prod's
    H100 job and gives it a new image tag and timeout."""
    with scratch_review(tmp_path_factory, "words") as repo:
        for name in ("staging", "dev"):
            (repo / f"stacks/Pulumi.{name}.yaml").write_text(stack({"eval": L4}))
        prod = repo / "stacks/Pulumi.prod.yaml"
        prod.write_text(stack({"llm": LLM, "eval": L4}))
        commit_all(repo, "base")
        head = job(workers=1, tag="1.1", timeout="7200s", disk={"bootDiskType": "pd-standard", "bootDiskSizeGb": 500},
                   fallbacks=[{"scheduling": {"strategy": "SPOT"}}])
        added = job(disk={"bootDiskType": "pd-standard", "bootDiskSizeGb": 500},
                    fallbacks=[{"scheduling": {"strategy": "SPOT"}}])
        prod.write_text(stack({"llm": head, "eval": L4, "ft": added}))
        yield repo


def _plan(stack_name: str, as_json: bool) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert run_plan(stack_name, None, as_json=as_json) == 0
    return out.getvalue()


def test_plan_shows_where_each_job_runs(project: Path) -> None:
    document = json.loads(_plan("prod", as_json=True))
    llm = document["placement"]["llm"]
    assert llm["reservations"] == [{"type": "SPECIFIC_RESERVATION", "name": RESERVATION,
                                    "machineType": "a3-highgpu-8g", "machines": 2}]
    assert document["placement"]["eval"] == {"reservations": [], "persistentResource": None, "disks": [],
                                             "fallbacks": []}
    (spot,) = llm["fallbacks"]
    assert llm["disks"] == [{"pool": i, "path": f"jobSpec.workerPoolSpecs[{i}]", "bootDiskType": "pd-standard",
                             "bootDiskSizeGb": 500} for i in (0, 1)]
    text = _plan("prod", as_json=False)
    assert f"      reservation: SPECIFIC_RESERVATION {RESERVATION}: needs 2 a3-highgpu-8g\n" in text
    assert "      pool 0 disk: pd-standard, 500 GB\n" in text
    assert f"      fallback 1: {spot['text']}\n" in text
    assert spot["text"].startswith("us-central1, a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB; a3-highgpu-8g x1 + 8 "
                                   "NVIDIA_H100_80GB, SPOT, $")


def test_the_diff_totals_cover_the_changed_stack_and_label_all_stacks(project: Path) -> None:
    document = diff("main", None)
    assert isinstance(document, dict)
    stacks = document["stacks"]
    assert {name: s["change"] for name, s in stacks.items()} == {"dev": "unchanged", "prod": "changed",
                                                                "staging": "unchanged"}
    prod, total = stacks["prod"], document["total"]
    assert total["stacks"] == ["prod"]
    assert (total["before"], total["after"]) == (prod["before"], prod["after"]), "the changed stacks' own sums"
    assert total["deltaUsdPerHour"] == prod["deltaUsdPerHour"] > 0
    every = document["allStacks"]
    for side in ("before", "after"):
        assert every[side]["usdPerHour"] == round(sum(s[side]["usdPerHour"] for s in stacks.values()), 6)
        assert every[side]["usdPerHour"] > total[side]["usdPerHour"], "the unchanged stacks are not in the total"
    markdown, text = render_markdown(document), render_text(document)
    money = {key: f"${value:,.2f}/h" for key, value in (("prod before", prod["before"]["usdPerHour"]),
                                                         ("prod after", prod["after"]["usdPerHour"]),
                                                         ("all before", every["before"]["usdPerHour"]),
                                                         ("all after", every["after"]["usdPerHour"]),
                                                         ("delta", prod["deltaUsdPerHour"]))}
    assert markdown.splitlines()[1].startswith(f"### Training jobs: +{money['delta']} at the jobs' rates")
    assert f"| **prod** | changed | {money['prod before']} -> {money['prod after']} (+{money['delta']}) |" in markdown
    assert (f"\n**Total of the changed stacks (prod):** $/h {money['prod before']} -> {money['prod after']} "
            f"(+{money['delta']});") in markdown
    assert f"\nAll stacks, changed or not (3): $/h {money['all before']} -> {money['all after']}; worst case " \
           in markdown
    assert (f"\ntotal of the changed stacks (prod): $/h at the jobs' rates {money['prod before']} -> "
            f"{money['prod after']} (+{money['delta']});") in text
    assert f"\nAll stacks, changed or not (3): $/h {money['all before']} -> {money['all after']};" in text


def test_the_diff_names_the_change_in_words_and_the_reservation_it_needs(project: Path) -> None:
    document = diff("main", None)
    assert isinstance(document, dict)
    llm = document["stacks"]["prod"]["jobs"]["llm"]
    (spot_before,), (spot_after,) = (llm["placement"][side]["fallbacks"] for side in ("before", "after"))
    assert spot_after["usdPerHour"] == pytest.approx(2 * spot_before["usdPerHour"]), "twice the machines"
    expected = ["8 -> 16 NVIDIA_H100_80GB", "pool 1 added: a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB",
                "timeout 1 h -> 2 h", "image llm 1.0 -> 1.1",
                f"fallback 1: {spot_before['text']} -> {spot_after['text']}", reserved(2, 1)]
    assert spot_before["text"].endswith(f", SPOT, ${spot_before['usdPerHour']:,.2f}/h"), "its price, as plan says it"
    assert llm["change"] == "replaced" and llm["changes"] == expected
    assert llm["placement"]["before"]["reservations"][0]["machines"] == 1
    assert llm["placement"]["after"]["reservations"][0]["machines"] == 2
    markdown, text = render_markdown(document), render_text(document)
    assert "- `llm` replaced: the next `up` makes a new job and cancels the running one, if it runs\n" + \
        "\n".join(f"  - {line}" for line in expected) in markdown
    assert "    llm: replaced: the next `up` makes a new job and cancels the running one, if it runs\n" + \
        "\n".join(f"        {line}" for line in expected) in text
    assert "jobSpec.workerPoolSpecs changed" not in markdown
    ft = document["stacks"]["prod"]["jobs"]["ft"]
    (spot,) = ft["placement"]["after"]["fallbacks"]
    assert ft["change"] == "added" and ft["changes"] == [
        reserved(1), "pool 0 disk pd-standard 500 GB", f"fallback 1: {spot['text']}"]
    assert f"- `ft` added: the next `up` starts it\n  - {reserved(1)}\n" in markdown


def test_each_fallback_that_changes_in_order_with_its_region_machine_strategy_and_price(tmp_path: Path) -> None:
    a2 = {"machineSpec": {"machineType": "a2-ultragpu-8g", "acceleratorType": "NVIDIA_A100_80GB",
                          "acceleratorCount": 8}, "scheduling": {"strategy": "SPOT"}}
    old = job(reservation=None, fallbacks=[{"scheduling": {"strategy": "SPOT"}}, a2])
    new = job(reservation=None, workers=1, fallbacks=[{"scheduling": {"strategy": "SPOT"}}, a2])
    before, after = (placement_of(side, "j")["fallbacks"] for side in facts_pair(tmp_path, old, new))
    assert [f["usdPerHour"] for f in after] == pytest.approx([2 * f["usdPerHour"] for f in before])
    assert before[1]["text"] == (f"us-central1, a2-ultragpu-8g x1 + 8 NVIDIA_A100_80GB, SPOT, "
                                 f"${before[1]['usdPerHour']:,.2f}/h"), "plan's words for a fallback"
    assert said(tmp_path, old, new) == [
        "8 -> 16 NVIDIA_H100_80GB", "pool 1 added: a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB",
        f"fallback 1: {before[0]['text']} -> {after[0]['text']}",
        f"fallback 2: {before[1]['text']} -> {after[1]['text']}"], "each fallback's price that moved, in order"
    assert said(tmp_path, old, job(reservation=None, fallbacks=[{"scheduling": {"strategy": "SPOT"}}])) == [
        f"fallback 2 removed (was {before[1]['text']})"]


def test_a_job_on_two_reservations_is_said_as_on_both(tmp_path: Path) -> None:
    other = "projects/my-proj/zones/us-central1-a/reservations/r2"
    new = job(workers=1)
    first = new["jobSpec"]["workerPoolSpecs"][0] = json.loads(json.dumps(new["jobSpec"]["workerPoolSpecs"][0]))
    first["machineSpec"]["reservationAffinity"]["values"] = [other]
    assert said(tmp_path, job(workers=1), new) == [reserved(1, 0, other), reserved(1, 2)], \
        "pool 0 on r2 and pool 1 on h100s: both, each with its affinity type and the machines it needs"
    assert said(tmp_path, new, new) == []


def test_the_plan_says_each_reservation_a_job_takes_from() -> None:
    """Pools on two reservations: two lines, each its own key (the plan's details are one mapping)."""
    r = "projects/p/zones/us-central1-a/reservations/"
    placement = {"reservations": [
        {"type": "SPECIFIC_RESERVATION", "name": f"{r}r2", "machines": 1, "machineType": "a3-highgpu-8g"},
        {"type": "SPECIFIC_RESERVATION", "name": f"{r}r1", "machines": 2, "machineType": "a3-highgpu-8g"}]}
    assert dict(placement_lines(placement)) == {
        "reservation 1": f"SPECIFIC_RESERVATION {r}r2: needs 1 a3-highgpu-8g",
        "reservation 2": f"SPECIFIC_RESERVATION {r}r1: needs 2 a3-highgpu-8g"}
    one = {"reservations": placement["reservations"][:1]}
    assert dict(placement_lines(one)) == {"reservation": f"SPECIFIC_RESERVATION {r}r2: needs 1 a3-highgpu-8g"}
