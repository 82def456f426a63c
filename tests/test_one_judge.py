"""One region rule and one judge for a stack's jobs.

- The regions each backend trains in live in one catalog table (catalog.BACKEND_REGIONS) and are refused by one
  rule (rules.regions.region_problem): the job rules, the stack's region, a job's and a fallback's region keys and
  a persistent resource's region say the same bad region in the same words, each at the key it was written at.
- A stack's job is judged once, by load.judge told what the stack knows (a trainer the stack builds, a label value
  it holds encrypted), in all three vocabularies: the settings hold the job as written, never a stand-in.
- Nothing outside jobspec/ calls a vocabulary's parse (vocab.*.parse_*): every reader goes through load.
"""

from __future__ import annotations

import ast
import copy
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec import catalog, load
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, NAMESPACE, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.rules import region_problem, training_regions
from gcp_training_jobs.resources.settings.judge import judge
from gcp_training_jobs.resources.settings.secrets import OPAQUE
from tests.job_regions_support import H100, LEGACY, ROOT, SWEEP

BAD = "europe-moon1"
STACK = {"gcp:project": "my-project", f"{NAMESPACE}:backend": VERTEX, f"{NAMESPACE}:region": "us-central1"}
POOL = {"region": "us-central1", "resourcePools": [{
    "machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1},
    "replicaCount": 1}]}


def refusals(config: dict[str, Any]) -> list[Problem]:
    with pytest.raises(SpecError) as refused:
        judge({**STACK, **config}, ROOT)
    return list(refused.value.problems)


def about(problems: list[Problem], region: str = BAD) -> list[Problem]:
    return [p for p in problems if repr(region) in p.message]


def test_the_regions_of_each_backend_have_one_home() -> None:
    assert training_regions(VERTEX) == catalog.VERTEX_TRAINING_REGIONS == catalog.BACKEND_REGIONS[VERTEX]
    assert training_regions(AI_PLATFORM) == catalog.TRAINING_REGIONS == catalog.BACKEND_REGIONS[AI_PLATFORM]
    assert training_regions(None) == catalog.TRAINING_REGIONS  # a trainingInput's own vocabulary
    assert region_problem("us-east5", "x", VERTEX) is None
    assert region_problem("us-east5", "x", AI_PLATFORM) is not None  # Vertex AI's, not AI Platform's


def test_a_bad_region_is_refused_in_the_same_words_wherever_it_is_written() -> None:
    said = region_problem(BAD, "anywhere", VERTEX)
    assert said is not None and said.message.startswith(f"'{BAD}' is not a Vertex AI training region")
    assert "allowed: europe-central2, europe-north1," in said.message  # its geography's regions
    jobs = f"{NAMESPACE}:jobs"
    found = {
        # the stack's region, inherited by a jobSpec, a tuningJob and a trainingInput without one: said once
        "stack": about(refusals({f"{NAMESPACE}:region": BAD, jobs: {
            "h100": {"jobSpec": H100["jobSpec"]}, "sweep": {"tuningJob": SWEEP["tuningJob"]},
            "legacy": {"trainingInput": {k: v for k, v in LEGACY["trainingInput"].items() if k != "region"}}}})),
        "job": about(refusals({jobs: {"h100": {**H100, "region": BAD}}})),
        "fallback": about(refusals({jobs: {"h100": {**H100, "fallbacks": [{"region": BAD}]}}})),
        "resource": about(refusals({f"{NAMESPACE}:persistentResources": {"pool": {**POOL, "region": BAD}}})),
        "jobSpec": about(list(load.judge(H100["jobSpec"], region=BAD, region_at="--region").problems)),
        "tuning": about(list(load.judge(SWEEP["tuningJob"], region=BAD, region_at="--region").problems)),
        "trainingInput": about(list(load.judge({"trainingInput": {**LEGACY["trainingInput"], "region": BAD}},
                                               backend=VERTEX).problems)),
    }
    assert {where: [p.path for p in problems] for where, problems in found.items()} == {
        "stack": [f"{NAMESPACE}:region"],
        "job": [f"{jobs}.h100.region"],
        "fallback": [f"{jobs}.h100.fallbacks[0].region"],
        "resource": [f"{NAMESPACE}:persistentResources.pool.region"],
        "jobSpec": ["--region"],
        "tuning": ["--region"],
        "trainingInput": ["trainingInput.region"],
    }
    assert {p.message for problems in found.values() for p in problems} == {said.message}


def test_ai_platform_says_its_bad_region_in_the_same_words_in_the_stack_and_the_job() -> None:
    said = region_problem("us-moon1", "x", AI_PLATFORM)
    assert said is not None and said.message.startswith("'us-moon1' is not an AI Platform Training region")
    stack = about(refusals({f"{NAMESPACE}:backend": AI_PLATFORM, f"{NAMESPACE}:region": "us-moon1"}), "us-moon1")
    job = about(list(load.judge({"trainingInput": {**LEGACY["trainingInput"], "region": "us-moon1"}},
                                backend=AI_PLATFORM).problems), "us-moon1")
    assert [(p.path, p.message) for p in stack + job] == [
        (f"{NAMESPACE}:region", said.message), ("trainingInput.region", said.message)]


PACKAGED = {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
    "replicaCount": 1,
    "pythonPackageSpec": {"executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                          "pythonModule": "trainer.task"}}]}
PREBUILT_DAY = date(2024, 6, 1)  # tf-gpu.2-11 was still available


@pytest.mark.parametrize("form", ["jobSpec", "tuningJob"])
def test_a_package_the_stack_builds_is_judged_as_supplied_in_every_vocabulary(form: str) -> None:
    """No stand-in URI: the job is judged and held as written, its packageUris left to the stack."""
    data = {"jobSpec": copy.deepcopy(PACKAGED)} if form == "jobSpec" else \
        {"tuningJob": {**copy.deepcopy(SWEEP["tuningJob"]), "trialJobSpec": copy.deepcopy(PACKAGED)}}
    at = "jobSpec.workerPoolSpecs[0]" if form == "jobSpec" else "tuningJob.trialJobSpec.workerPoolSpecs[0]"
    unsupplied = load.judge(data, enclosed=True, backend=VERTEX, region="us-central1", today=PREBUILT_DAY)
    assert [p.path for p in unsupplied.problems] == [f"{at}.pythonPackageSpec.packageUris"]
    supplied = load.judge(data, enclosed=True, backend=VERTEX, region="us-central1", today=PREBUILT_DAY,
                          package_supplied=True)
    assert supplied.ok, supplied.problems
    assert "gs://" not in repr(supplied.job) and "gs://" not in repr(supplied.body)  # nothing stood in
    many = copy.deepcopy(data)
    spec = many.get("jobSpec") or many["tuningJob"]["trialJobSpec"]
    spec["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"] = [f"gs://my-bucket/{i}.tar.gz" for i in range(100)]
    spec["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"][1] = "my-bucket/1.tar.gz"
    refused = load.judge(many, enclosed=True, backend=VERTEX, region="us-central1", today=PREBUILT_DAY,
                         package_supplied=True).problems
    # the stack's package counts against the bound; a URI is named at its index as written
    assert [p.path for p in refused] == [f"{at}.pythonPackageSpec.packageUris",
                                         f"{at}.pythonPackageSpec.packageUris[1]"]
    assert refused[0].message.startswith("101 URIs; allowed: at most 100")


def test_a_label_the_stack_holds_encrypted_is_judged_as_a_valid_one_and_kept() -> None:
    labels = {"team": OPAQUE}
    for data in ({"jobSpec": H100["jobSpec"], "labels": labels}, {**SWEEP, "labels": labels},
                 {**LEGACY, "labels": labels}):
        plain = load.judge(data, enclosed=True, backend=VERTEX, region="us-east5")
        assert [p.path for p in plain.problems] == ["labels.team"]
        judged = load.judge(data, enclosed=True, backend=VERTEX, region="us-east5", opaque=OPAQUE)
        assert judged.ok, judged.problems
        assert judged.job.labels == labels and judged.facts.labels == labels


def test_a_stack_job_with_a_trainer_is_held_as_written() -> None:
    """The settings hold what load.judge made of the job, the job the stack sends (its package goes in later)."""
    job = {"trainer": {"path": "trainers/example"}, "jobSpec": copy.deepcopy(PACKAGED)}
    config = {**STACK, f"{NAMESPACE}:jobs": {"train": job}}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GCP_TRAINING_JOBS_TODAY", PREBUILT_DAY.isoformat())
        held = judge(config, ROOT).jobs["train"]
    spec = held.job.spec  # type: ignore[union-attr]
    assert spec.worker_pool_specs[0].python_package_spec.package_uris is None
    assert held.judged.job is held.job


# --- Nothing outside jobspec/ parses a vocabulary -----------------------------------------------------------------

PACKAGE = ROOT / "gcp_training_jobs"


def vocabulary_parses() -> set[str]:
    """Every parse a vocabulary module defines (jobspec/vocab/*.py: `def parse_...`)."""
    found = set()
    for path in (PACKAGE / "jobspec" / "vocab").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                  and node.name.startswith("parse_")}
    return found


def parses_named(path: Path, parses: set[str]) -> list[str]:
    """The vocabulary parses a module imports or calls (by name, or as an attribute of a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            named += [alias.name for alias in node.names if alias.name in parses]
        elif isinstance(node, ast.Attribute) and node.attr in parses:
            named.append(node.attr)
    return named


def outside_jobspec() -> list[Path]:
    return [path for folder in (PACKAGE, ROOT / "components", ROOT / "policies") for path in folder.rglob("*.py")
            if "jobspec" not in path.relative_to(ROOT).parts]


def test_no_module_outside_jobspec_parses_a_vocabulary() -> None:
    parses = vocabulary_parses()
    assert {"parse_job", "parse_custom_job_spec", "parse_tuning_config"} <= parses
    offenders = {str(path.relative_to(ROOT)): named for path in outside_jobspec()
                 if (named := parses_named(path, parses))}
    assert offenders == {}


def test_the_structural_check_sees_a_parse(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from gcp_training_jobs.jobspec.vocab.tuning import parse_tuning_config\n"
                   "from gcp_training_jobs.jobspec.vocab import training_input\n"
                   "training_input.parse_job({})\n")
    assert parses_named(bad, vocabulary_parses()) == ["parse_tuning_config", "parse_job"]
