"""Messages read once: each refusal the user meets reads as the project's own line (where, field, what is wrong,
what is allowed), never a library's. The provider's check failures carry no property, so the engine shows their
reason alone (`resource 'NAME' has a problem: REASON`), never its dump of the input's value; the protect message
names both keys and the `pulumi up` that must record a change; YAML slips, bucket names and the console command's
usage line in plain words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pulumi.dynamic import Config, ConfigureRequest

from gcp_training_jobs.cli.main import main, parser, program_name
from gcp_training_jobs.jobspec.core.errors import UnreadableError
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_UNREADABLE, gcs_uri_problem
from gcp_training_jobs.jobspec.io.documents import parse_yaml
from tests.helpers import props, spec_props, t4_job

ROOT = Path(__file__).resolve().parents[1]


def _configured(provider, jobs: dict) -> None:
    provider.configure(ConfigureRequest(Config({"gcp-training-jobs:jobs": json.dumps(jobs)}, "gcp-training-jobs")))


def test_a_program_jobs_refusal_names_the_resource_and_the_field_with_no_property(provider) -> None:
    job = t4_job(count=3)
    job["trainingInput"]["jobDir"] = "/tmp/out"
    failures = provider.check({}, props("ai-platform", job)).failures
    assert failures and all(f.property == "" for f in failures)  # the engine then prints no `property P value {V}`
    reasons = {f.reason for f in failures}
    assert ("TrainingJob resnet, job.trainingInput.jobDir: '/tmp/out' is not a Cloud Storage URI: "
        "it does not start with gs://; allowed: "
            "gs://BUCKET/PATH") in reasons
    (count,) = reasons - {next(r for r in reasons if "jobDir" in r)}
    assert count.startswith("TrainingJob resnet, job.trainingInput.masterConfig.acceleratorConfig.count, ")
    assert count.endswith(": 3 NVIDIA_TESLA_T4 on n1-standard-8; allowed: 1, 2, 4")


def test_a_stack_jobs_refusal_names_its_stack_key(provider) -> None:
    _configured(provider, {"resnet": {"trainingInput": {}}})
    job = t4_job()
    job["trainingInput"]["jobDir"] = "/tmp/out"
    (failure,) = provider.check({}, props("ai-platform", job)).failures
    assert (failure.property, failure.reason) == (
        "", "gcp-training-jobs:jobs.resnet.trainingInput.jobDir: '/tmp/out' is not a Cloud Storage URI: "
        "it does not start with gs://; allowed: "
            "gs://BUCKET/PATH")
    (failure,) = provider.check({}, props("ai-platform", job, name="other", identity="o/p/s/other")).failures
    assert failure.reason.startswith("TrainingJob other, job.trainingInput.jobDir: ")  # not one of the stack's


def test_inputs_guardrails_and_the_environment_are_named_where_they_are_set(provider, monkeypatch) -> None:
    failures = provider.check({}, props("ai-platform", waitTimeoutSeconds=-5, project="")).failures
    assert [f.reason.split(": ")[0] for f in failures] == ["TrainingJob resnet, project",
                                                           "TrainingJob resnet, waitTimeoutSeconds"]
    _configured(provider, {"l4": {}})
    (failure,) = provider.check({}, spec_props(guardrails={"maxAcceleratorsPerJob": "many"})).failures
    assert failure.reason.startswith("gcp-training-jobs:guardrails.maxAcceleratorsPerJob (job l4): ")
    monkeypatch.setenv("GCP_TRAINING_JOBS_RECONCILE_SECONDS", "lots")
    (failure,) = provider.check({}, spec_props()).failures
    assert failure.property == "" and failure.reason.startswith("environment GCP_TRAINING_JOBS_RECONCILE_SECONDS: ")


# --- YAML slips: the file, line and column, and the slip in plain words (exit 2, unreadable) -----------------

SLIPS = [
    ("a tab for indentation", "trainingInput:\n\tregion: us-central1\n",
     "2:1: not valid YAML: a tab at line 2, column 1; YAML indents and separates with spaces only: replace the tab "
     "with spaces"),
    ("a tab inside the indentation", "trainingInput:\n  masterConfig:\n  \timageUri: x\n",
     "3:3: not valid YAML: a tab at line 3, column 3; YAML indents and separates with spaces only: replace the tab "
     "with spaces"),
    ("a colon inside an unquoted value", "trainingInput:\n  jobDir: gs://b/p: x\n",
     "2:19: not valid YAML: a colon inside an unquoted value at line 2, column 19; allowed: quote the value "
     "(key: \"a: b\") or drop the space after the colon"),
    ("a missing colon", "trainingInput:\n  region us-central1\n  scaleTier: BASIC\n",
     "3:12: not valid YAML: line 2 has no colon after its key (`key: value`), so line 3 reads as its continuation; "
     "allowed: `key: value` on each line"),
    ("a key indented deeper than its sibling", "trainingInput:\n  region: us-central1\n    scaleTier: BASIC\n",
     "3:14: not valid YAML: line 3 is indented deeper than the key above it, whose value is already set; allowed: "
     "the same indentation as the keys beside it (or nothing after the colon above, to nest)"),
    ("a key indented less than its sibling", "trainingInput:\n  region: us-central1\n scaleTier: BASIC\n",
     "3:2: not valid YAML: line 3, column 2 is not a key of the mapping above (the mapping that starts at line 1, "
     "column 1): it is indented differently from the keys beside it, or is a list item (-) where a key belongs; "
     "allowed: `key: value` at the same indentation as the keys beside it"),
    ("an unclosed quote", 'trainingInput:\n  region: "us-central1\n  scaleTier: BASIC\n',
     '4:1: not valid YAML: the " opened at line 2, column 11 is never closed; allowed: end the value with " too'),
    ("an unclosed bracket", "trainingInput:\n  args: [a, b\n  region: x\n",
     "3:9: not valid YAML: the [ opened at line 2, column 9 is never closed; allowed: close it with ]"),
    ("an unclosed bracket at the end", "trainingInput: [\n",
     "2:1: not valid YAML: the [ opened at line 1, column 16 is never closed; allowed: close it with ]"),
    ("an unclosed brace", "trainingInput:\n  masterConfig: {imageUri: x\n  region: x\n",
     "3:9: not valid YAML: the { opened at line 2, column 17 is never closed; allowed: close it with }"),
]


@pytest.mark.parametrize(("slip", "text", "said"), SLIPS, ids=[s[0] for s in SLIPS])
def test_a_yaml_slip_is_named_in_plain_words_with_file_line_and_column(tmp_path: Path, capsys, slip, text,
                                                                       said) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == EXIT_UNREADABLE
    assert capsys.readouterr().err.splitlines() == [f"{path}:{said}"]


def test_a_stack_files_slip_reads_the_same(tmp_path: Path) -> None:
    with pytest.raises(UnreadableError) as caught:
        parse_yaml("config:\n  gcp-training-jobs:jobs:\n\t  l4: {}\n", "stacks/Pulumi.dev.yaml")
    assert str(caught.value) == ("stacks/Pulumi.dev.yaml:3:1: not valid YAML: a tab at line 3, column 1; YAML "
                                 "indents and separates with spaces only: replace the tab with spaces")


# --- Bucket names and gs:// URIs: the rule that failed ----------------------------------------------------------

RULE = ("a bucket name of 3 to 63 characters (up to 222 with dots, each dot-separated part at most 63): lowercase "
        "letters, digits, dashes, underscores and dots, starting and ending with a letter or digit "
        "(https://cloud.google.com/storage/docs/buckets#naming)")


@pytest.mark.parametrize(("uri", "said"), [
    ("gs://b/p.tar.gz", f"'gs://b/p.tar.gz' is not a Cloud Storage URI: its bucket name 'b' is 1 character; "
                        f"allowed: {RULE}"),
    ("gs://My-Bucket/p.tar.gz", f"'gs://My-Bucket/p.tar.gz' is not a Cloud Storage URI: its bucket name "
                                f"'My-Bucket' has 'B' 'M'; allowed: {RULE}"),
    ("gs://bucket-/p.tar.gz", f"'gs://bucket-/p.tar.gz' is not a Cloud Storage URI: its bucket name 'bucket-' "
                              f"starts or ends with '-'; allowed: {RULE}"),
    (f"gs://{'a' * 64}/p.tar.gz", f"'gs://{'a' * 64}/p.tar.gz' is not a Cloud Storage URI: its bucket name "
                                  f"'{'a' * 64}' is 64 characters; allowed: {RULE}"),
    (f"gs://{'a' * 64}.example.com/p.tar.gz", f"'gs://{'a' * 64}.example.com/p.tar.gz' is not a Cloud Storage "
                                              f"URI: its bucket name '{'a' * 64}.example.com' has a dot-separated "
                                              f"part of 64 characters; allowed: {RULE}"),
    ("gs://my-bucket/", "'gs://my-bucket/' names no object: the path after gs://my-bucket/ is empty; allowed: "
                        "gs://BUCKET/PATH"),
    ("trainer.tar.gz", "'trainer.tar.gz' is not a Cloud Storage URI: it does not start with gs://; allowed: "
                       "gs://BUCKET/PATH"),
])
def test_a_package_uri_refusal_names_the_rule_that_failed(tmp_path: Path, capsys, uri: str, said: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(f"trainingInput:\n  scaleTier: BASIC\n  region: us-central1\n  runtimeVersion: '2.11'\n"
                    f"  pythonVersion: '3.7'\n  pythonModule: trainer.task\n  packageUris: ['{uri}']\n")
    assert main(["validate", "-q", str(path)]) == EXIT_INVALID
    assert capsys.readouterr().out.splitlines() == [f"{path}: trainingInput.packageUris[0]: {said}"]


def test_a_dotted_bucket_name_may_run_to_222_characters_and_a_job_dir_may_be_a_bucket_alone() -> None:
    dotted = ".".join(["a" * 63] * 3) + ".abcdefghijklmnopqrstuvwxyz0"  # 63 * 3 + 3 dots + 28 = 220
    assert gcs_uri_problem(f"gs://{dotted}/trainer.tar.gz", needs_object=True) is None
    assert gcs_uri_problem("gs://my-bucket") is None  # a jobDir, an output prefix: the bucket's root
    assert gcs_uri_problem("gs://my_bucket.example.com/out") is None


# --- The usage line names the command as it was run ---------------------------------------------------------

def _usage(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.slow
def test_the_usage_line_names_the_console_script_or_the_module(tmp_path: Path) -> None:
    # the console script pip writes for [project.scripts] gcp-training-jobs = "gcp_training_jobs.cli.main:main"
    script = tmp_path / "gcp-training-jobs"
    script.write_text("import sys\nfrom gcp_training_jobs.cli.main import main\nsys.exit(main())\n")
    as_script = _usage([sys.executable, str(script), "validat"], tmp_path)
    assert as_script.returncode == 2
    assert as_script.stderr.startswith("usage: gcp-training-jobs [-h]")
    assert "gcp-training-jobs: error: argument command: invalid choice: 'validat'" in as_script.stderr
    as_module = _usage([sys.executable, "-m", "components"], tmp_path)
    assert as_module.returncode == 2 and as_module.stderr.startswith("usage: python -m components [-h]")


def test_the_program_name_is_the_scripts_own_or_the_modules() -> None:
    assert program_name("/venv/bin/gcp-training-jobs") == "gcp-training-jobs"
    assert program_name("/repo/components/__main__.py") == "python -m components"
    assert parser("gcp-training-jobs").format_usage().startswith("usage: gcp-training-jobs [-h]")
