"""Credentials stay off Google's plain-text fields: a label value shaped like a known credential (the public
patterns of gitleaks, catalog/credentials.py) is refused without being echoed; args, container env and the other
text fields of a job get a warning naming the field, never the value; git SHAs and other plain hashes stay allowed.
The samples are built here from each pattern's shape (none is a real credential)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec.catalog import credentials
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.load import judge_custom_job, load_custom_job, load_job
from tests.helpers import CREDENTIAL_SAMPLES as SAMPLES

ROOT = Path(__file__).resolve().parents[1]
#: Label-safe (lowercase) credentials: the syntax rule alone would let them through.
LABEL_SAFE = {"slack-bot-token", "slack-user-token", "npm-access-token", "gitlab-pat"}
HASHES = ["0123456789abcdef0123456789abcdef01234567",  # a git SHA
          hashlib.sha256(b"x").hexdigest()[:63], "3f9a2c1", "v1-2-3", "sk-learn", "hf-hub", "main",
          "sk-learn-pipeline", "hf_hub", "xoxb-notes"]
SPEC: dict[str, Any] = {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
    "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/train:1"}}]}


def test_every_rule_has_a_sample_and_the_catalog_names_its_source() -> None:
    assert {c.rule for c in credentials.CREDENTIALS} == set(SAMPLES)
    assert credentials.SOURCE.url.startswith("https://github.com/gitleaks/gitleaks/blob/")
    for rule, sample in SAMPLES.items():
        found = credentials.credential_in(f"--flag={sample} more")
        assert found is not None and found.rule == rule, (rule, found)


PREFIX_SAMPLES = ["xoxb-123456789012-abcdef", "xoxp-1234-5678-abcdefghij", "ghp_abc123def456ghi789jk",
                  "github_pat_11abcdefghij0123456789", "hf_abcdefghij1234567890", "akia1234567890abcdef",
                  "sk-proj-abc123def456ghi789"]


def held(kind: credentials.Credential, sample: str) -> bool:
    """Whether `sample` holds one of the kind's anchors: as written for a cased kind, in any case otherwise."""
    return any(a in (sample if kind.cased else sample.lower()) for a in kind.anchors)


def test_every_match_holds_one_of_its_rules_anchors() -> None:
    """credential_in tells a value with no anchor apart without a regex: each rule's samples (full and prefix) hold
    one of its anchors, and each anchor is text the pattern itself requires: as the pattern spells it where the
    pattern is case-sensitive (a cased kind), lowercase where it is not."""
    for rule, sample in SAMPLES.items():
        (kind,) = [c for c in credentials.CREDENTIALS if c.rule == rule]
        assert held(kind, sample), rule
        if not kind.cased:
            assert held(kind, sample.upper()) and held(kind, sample.lower()), rule
    for sample in PREFIX_SAMPLES:
        kinds = [c for c in credentials.PREFIXES if c.pattern.search(sample)]
        assert kinds and held(kinds[0], sample), sample
    samples = [(k, s) for k in credentials.CREDENTIALS for s in [SAMPLES[k.rule]]]
    samples += [(k, s) for s in PREFIX_SAMPLES for k in credentials.PREFIXES if k.pattern.search(s)]
    for kind, sample in samples:  # a cased kind's sample, its anchor in the other case, is no match
        for anchor in (a for a in kind.anchors if kind.cased and a in sample and a != a.swapcase()):
            assert not re.search(kind.regex, sample.replace(anchor, anchor.swapcase())), (kind.rule, anchor)
    for kind in (*credentials.CREDENTIALS, *credentials.PREFIXES, credentials.NAMED):
        assert kind.anchors and (kind.cased or all(a == a.lower() for a in kind.anchors)), kind.rule


@pytest.mark.parametrize("text", ["asia-east1", "europe-west4", "NVIDIA_TESLA_P100 is not offered in region "
                                  "asia-northeast1; allowed regions: asia-east1, us-central1", "masterConfig"])
def test_a_region_or_a_field_name_holds_no_anchor(text: str) -> None:
    """`asia` is an AWS key's prefix only in capitals (ASIA...): a region's name starts no look for credentials."""
    assert not credentials.may_hold_credential(text)
    assert credentials.masked_text(text) == text


@pytest.mark.parametrize("value", HASHES)
def test_plain_hashes_and_words_are_no_credential(value: str) -> None:
    assert credentials.credential_in(value) is None
    load_custom_job(SPEC, region="us-central1", labels={"commit": value.lower()})


@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_a_credential_shaped_label_is_refused_without_being_echoed(rule: str) -> None:
    value = SAMPLES[rule].lower() if rule in LABEL_SAFE else SAMPLES[rule]
    with pytest.raises(SpecError) as caught:
        load_custom_job(SPEC, region="us-central1", labels={"token": value})
    (problem,) = caught.value.problems
    assert problem.path == "labels.token"
    assert f"(gitleaks rule {rule}), so it is not shown" in problem.message
    assert "Secret Manager" in problem.message
    assert value not in str(problem) and value[4:] not in str(problem)


@pytest.mark.parametrize("value", PREFIX_SAMPLES)
def test_a_label_that_starts_like_a_credential_is_refused_too(value: str) -> None:
    """Shorter than the full patterns (a test token, a truncated one): its published prefix and a token's tail
    are enough to refuse the label, still without echoing it."""
    with pytest.raises(SpecError) as caught:
        load_custom_job(SPEC, region="us-central1", labels={"token": value})
    (problem,) = caught.value.problems
    assert "so it is not shown" in problem.message and value not in str(problem) and value[4:] not in str(problem)


def test_a_trainingInput_label_is_judged_alike() -> None:
    data = {"labels": {"token": SAMPLES["huggingface-access-token"]},
            "trainingInput": {"scaleTier": "BASIC", "region": "us-central1", "runtimeVersion": "2.11",
                              "pythonVersion": "3.7", "pythonModule": "trainer.task",
                              "packageUris": ["gs://my-code/t.tar.gz"]}}
    with pytest.raises(SpecError) as caught:
        load_job(data)
    assert [p.path for p in caught.value.problems] == ["labels.token"]
    assert SAMPLES["huggingface-access-token"] not in str(caught.value)


def test_args_and_container_env_with_a_credential_warn_naming_the_field_not_the_value() -> None:
    spec = yaml.safe_load(yaml.safe_dump(SPEC))
    spec["workerPoolSpecs"][0]["containerSpec"].update(
        args=["--epochs=3", f"--token={SAMPLES['github-pat']}"],
        env=[{"name": "HF_TOKEN", "value": SAMPLES["huggingface-access-token"]}, {"name": "SHA", "value": HASHES[0]}])
    judged = judge_custom_job(spec, region="us-central1")
    assert judged.ok  # a warning: the job may still run
    assert [(w.path, w.message.split(" (not shown)")[0]) for w in judged.warnings] == [
        ("workerPoolSpecs[0].containerSpec.args[1]",
         "holds what looks like a GitHub personal access token (gitleaks rule github-pat)"),
        ("workerPoolSpecs[0].containerSpec.env[0].value",
         "holds what looks like a Hugging Face access token (gitleaks rule huggingface-access-token)")]
    for warning in judged.warnings:
        assert SAMPLES["github-pat"] not in str(warning) and SAMPLES["huggingface-access-token"] not in str(warning)


def test_validate_prints_neither_a_refused_label_nor_a_warned_arg(tmp_path: Path) -> None:
    spec = yaml.safe_load(yaml.safe_dump(SPEC))
    spec["workerPoolSpecs"][0]["containerSpec"]["args"] = [SAMPLES["openai-api-key"]]
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    label = SAMPLES["slack-bot-token"]
    done = subprocess.run([sys.executable, "-m", "components", "validate", str(path), "--region", "us-central1",
                           "--labels", f"tok={label}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path}: labels.tok: the value looks like a Slack bot token (gitleaks rule slack-bot-token)" in done.stdout
    assert f"{path}: warning: workerPoolSpecs[0].containerSpec.args[0]: holds what looks like an OpenAI API key" \
        in done.stderr
    assert label not in done.stdout + done.stderr and SAMPLES["openai-api-key"] not in done.stdout + done.stderr


# --- a credential by its name (gitleaks' generic-api-key) ---------------------------------------------------------

#: A Weights & Biases key: 40 hexadecimal digits (made up here), named WANDB_API_KEY.
WANDB = "3f9a2c1b7e4d5a6f8091" + "a2b3c4d5e6f708192a3b"
NAMED_PLAIN = [("--tokenizer", "bert-base-uncased"), ("--max_tokens", "2048"),
               ("TOKEN_SECRET", "projects/my-proj/secrets/hf-token/versions/latest"), ("API_KEY", "short"),
               ("DB_PASSWORD", "aaaaaaaaaaaa"), ("MODEL", WANDB), ("--model", "meta-llama/Llama-2-7b-hf")]


@pytest.mark.parametrize(("name", "value"), [("WANDB_API_KEY", WANDB), ("--wandb-api-key", WANDB),
                                             ("hub_token", "Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"),
                                             ("DB_PASSWORD", "Xk9-pQ2v_Lm7rT4w"), ("CLIENT_SECRET", WANDB[:32])])
def test_a_value_named_as_a_credential_is_one(name: str, value: str) -> None:
    assert credentials.named_credential(name, value)
    data = {"env": [{"name": name, "value": value}], "args": [f"{name}={value}", "--" + name.lstrip("-"), value]}
    found = credentials.masked(data)
    assert [f.path for f in found.found] == ["args[0]", "args[2]", "env[0].value"]
    assert {f.kind.rule for f in found.found} == {"generic-api-key"}
    assert value not in repr(found.value), found.value
    assert found.value["args"][0] == f"{name}=<value named as a credential, not shown>"  # the name stays readable


@pytest.mark.parametrize(("name", "value"), NAMED_PLAIN)
def test_a_value_its_name_or_shape_does_not_make_a_credential_stays_plain(name: str, value: str) -> None:
    assert not credentials.named_credential(name, value)
    assert credentials.found_in({"env": [{"name": name, "value": value}], "args": [f"{name}={value}"]}) == ()


def test_validate_and_render_of_a_job_file_with_a_wandb_key_name_it_and_never_print_it(tmp_path: Path) -> None:
    """A job file on its own: the key is warned of by its field (exit 0), and neither validate nor render prints it."""
    spec = yaml.safe_load(yaml.safe_dump(SPEC))
    spec["workerPoolSpecs"][0]["containerSpec"]["env"] = [{"name": "WANDB_API_KEY", "value": WANDB}]
    spec["workerPoolSpecs"][0]["containerSpec"]["args"] = [f"--wandb_api_key={WANDB}"]
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    for command in ("validate", "render"):
        done = subprocess.run([sys.executable, "-m", "components", command, str(path), "--region", "us-central1"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert WANDB not in done.stdout + done.stderr, command
        for field in ("args[0]", "env[0].value"):
            assert (f"{path}: warning: workerPoolSpecs[0].containerSpec.{field}: holds what looks like a value named "
                    "as a credential (gitleaks rule generic-api-key)") in done.stderr, (command, done.stderr)
    assert "<value named as a credential, not shown>" in done.stdout  # render's body
