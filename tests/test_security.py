"""Nothing leaks: credentials go only over TLS, a trainer archive holds only the trainer's own files, and a
secret config value stays secret in every resource input that carries it."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pulumi  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402
from google.auth import exceptions as auth_exceptions  # noqa: E402

from gcp_training_jobs.backends import transport  # noqa: E402
from gcp_training_jobs.backends.transport import RetryPolicy  # noqa: E402
from gcp_training_jobs.cli.plan.mocks import pulumi_config, run_program  # noqa: E402
from gcp_training_jobs.jobspec.core.endpoints import ALLOWED  # noqa: E402
from gcp_training_jobs.jobspec.core.env import EnvError  # noqa: E402
from gcp_training_jobs.jobspec.core.errors import SpecError  # noqa: E402
from gcp_training_jobs.jobspec.core.names import NAMESPACE  # noqa: E402
from gcp_training_jobs.resources import stack as stack_module  # noqa: E402
from gcp_training_jobs.resources.settings import load_stack_file  # noqa: E402
from gcp_training_jobs.resources.trainer_package import BUILD_DIR_ENV, BuildError, build_sdist  # noqa: E402
from gcp_training_jobs.resources.training_job import TrainingJobProvider  # noqa: E402
from tests.helpers import provider_props  # noqa: E402

KEY = f"{NAMESPACE}:apiEndpoint"
JOB = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
                         "runtimeVersion": "2.11", "pythonVersion": "3.7", "pythonModule": "trainer.task"}}


def stack_file(tmp_path: Path, **config: Any) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": {"gcp:project": "my-ml-test", **config}}), encoding="utf-8")
    return path


def problems(path: Path, root: Path = ROOT) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_stack_file(path, root=root)
    return [str(p) for p in caught.value.problems]


# --- Credentials only over TLS ------------------------------------------------------------------------------

@pytest.mark.parametrize("endpoint", ["http://192.0.2.2:18099/", "http://ml.googleapis.com/",
                                      "http://127.0.0.1.nip.io/", "http://10.0.0.1/"])
def test_settings_refuse_a_plaintext_endpoint_to_anything_but_loopback(tmp_path: Path, endpoint: str) -> None:
    (problem,) = problems(stack_file(tmp_path, **{KEY: endpoint}))
    assert problem.startswith(f"{tmp_path / 'Pulumi.t.yaml'}: {KEY}: ")
    assert "would carry Google credentials in clear text" in problem
    assert f"allowed: {ALLOWED}" in problem


@pytest.mark.parametrize("endpoint", ["https://us-central1-aiplatform.googleapis.com/",
                                      "https://aiplatform.googleapis.com/", "https://aiplatform-vialink1.p.googleapis.com/",
                                      "https://aiplatform.us-central1.rep.googleapis.com/v1/",
                                      "https://restricted.googleapis.com/", "https://ML.GoogleAPIs.com:443/",
                                      "http://127.0.0.1:8085/", "http://127.1.2.3/", "http://[::1]:8085/",
                                      "http://localhost:8085/"])
def test_settings_take_google_api_hosts_over_tls_and_loopback(tmp_path: Path, endpoint: str) -> None:
    assert load_stack_file(stack_file(tmp_path, **{KEY: endpoint}), root=ROOT).api_endpoint == endpoint


@pytest.mark.parametrize("endpoint", ["https://attacker.example/", "https://192.0.2.2:443/",
                                      "https://aiplatform.googleapis.com.attacker.example/",
                                      "https://googleapis.com/", "https://evilgoogleapis.com/",
                                      "https://attacker.example#.googleapis.com/",
                                      "https://attacker.example\\@aiplatform.googleapis.com/"])
def test_settings_refuse_an_https_host_that_is_not_googles(tmp_path: Path, endpoint: str) -> None:
    (problem,) = problems(stack_file(tmp_path, **{KEY: endpoint}))
    assert problem.startswith(f"{tmp_path / 'Pulumi.t.yaml'}: {KEY}: ")
    assert problem.endswith(f"allowed: {ALLOWED}")
    assert any(why in problem for why in ("which is not one of Google's API hosts", "not an http(s) URL",
                                          "a URL with a user name or password (not shown)"))


def test_another_https_host_only_where_the_environment_names_it(tmp_path: Path, monkeypatch) -> None:
    path = stack_file(tmp_path, **{KEY: "https://proxy.corp.example:8443/"})
    (problem,) = problems(path)
    assert "to proxy.corp.example, which is not one of Google's API hosts" in problem
    monkeypatch.setenv("GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS", "other.example, proxy.corp.example")
    assert load_stack_file(path, root=ROOT).api_endpoint == "https://proxy.corp.example:8443/"
    monkeypatch.setenv("GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS", "other.example")
    assert len(problems(path)) == 1


@pytest.mark.parametrize("endpoint", ["https://admin:s3cr%21t-P4ss@aiplatform.googleapis.com/",
                                      "https://ghp_0123456789abcdefABCDEF0123456789abcd@aiplatform.googleapis.com/"])
def test_an_endpoint_with_a_password_is_refused_and_never_printed(tmp_path: Path, endpoint: str) -> None:
    problem = "\n".join(problems(stack_file(tmp_path, **{KEY: endpoint})))
    assert "a URL with a user name or password (not shown)" in problem
    assert "s3cr" not in problem and "ghp_" not in problem and "admin" not in problem
    assert "'https://aiplatform.googleapis.com/'" in problem


def test_the_transport_never_resolves_credentials_for_a_plaintext_remote_endpoint(monkeypatch) -> None:
    resolved: list[str] = []
    monkeypatch.setattr("google.auth.default", lambda **_: resolved.append("adc") or (object(), "p"))
    with pytest.raises(transport.InsecureEndpointError, match=r"refusing to send credentials: "
                       r"http://192\.0\.2\.2:18099/ is not https:// and not loopback: it would carry Google "
                       r"credentials in clear text"):
        transport._credentials("http://192.0.2.2:18099/")
    with pytest.raises(transport.InsecureEndpointError, match=r"refusing to send credentials: https://192\.0\.2\.2/ "
                       r"is to 192\.0\.2\.2, which is not one of Google's API hosts"):
        transport._credentials("https://192.0.2.2/")
    with pytest.raises(transport.InsecureEndpointError) as caught:
        transport._credentials("https://me:hunter2@aiplatform.googleapis.com/")
    assert "hunter2" not in str(caught.value) and "me:" not in str(caught.value)
    assert resolved == []
    transport._credentials("https://aiplatform-vialink1.p.googleapis.com/")
    assert resolved == ["adc"]


def test_a_provider_pointed_at_a_plaintext_remote_endpoint_sends_nothing(monkeypatch) -> None:
    """The endpoint from the environment (or a state written before the settings check) is refused again
    where credentials are attached: no connection is even opened to the listener."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    monkeypatch.setattr(transport, "is_loopback", lambda endpoint: False)  # the listener plays a remote host
    monkeypatch.setattr(transport.endpoints, "is_loopback", lambda endpoint: False)
    monkeypatch.setattr("google.auth.default", lambda **_: pytest.fail("credentials resolved"))
    monkeypatch.setenv("GCP_TRAINING_JOBS_API_ENDPOINT", f"http://127.0.0.1:{port}/")
    transport.reset_for_tests()
    provider = TrainingJobProvider()
    job = {"trainingInput": {**JOB["trainingInput"], "packageUris": ["gs://b-staging/t.tar.gz"]}}
    inputs = dict(provider.check({}, provider_props(job, name="x", backend="ai-platform", identity="o/p/s/x")).inputs)
    try:
        with pytest.raises((transport.InsecureEndpointError, EnvError)):  # the variable itself is refused
            provider.create(inputs)
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
        transport.reset_for_tests()


def test_a_google_auth_transport_error_is_retried_and_a_lasting_refresh_error_is_not() -> None:
    class Request:
        def __init__(self, error: Exception, times: int):
            self.error, self.times, self.calls = error, times, 0

        def execute(self, **_: Any) -> dict[str, Any]:
            self.calls += 1
            if self.calls <= self.times:
                raise self.error
            return {"ok": True}

    policy = RetryPolicy(attempts=4, base_seconds=0)
    flaky = Request(auth_exceptions.TransportError("token endpoint unreachable"), times=2)
    assert transport.call(lambda: flaky, "http://127.0.0.1:9/", "get", policy=policy) == {"ok": True}
    assert flaky.calls == 3
    transient = Request(auth_exceptions.RefreshError("503 from the token endpoint", retryable=True), times=1)
    assert transport.call(lambda: transient, "http://127.0.0.1:9/", "get", policy=policy) == {"ok": True}
    revoked = Request(auth_exceptions.RefreshError("invalid_grant"), times=9)
    with pytest.raises(transport.CredentialsError, match="gcloud auth application-default login"):
        transport.call(lambda: revoked, "http://127.0.0.1:9/", "get", policy=policy)
    assert revoked.calls == 1


# --- A trainer is confined to the repository ----------------------------------------------------------------

@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root holding one trainer (a copy of trainers/example)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "Pulumi.yaml").write_text("name: t\n")
    shutil.copytree(ROOT / "trainers" / "example", root / "trainers" / "example",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def trainer_problems(root: Path, path: str) -> list[str]:
    job = {**JOB, "trainer": {"path": path}}
    file = root / "Pulumi.t.yaml"
    file.write_text(yaml.safe_dump({"config": {"gcp:project": "my-ml-test", f"{NAMESPACE}:backend": "ai-platform",
                                               f"{NAMESPACE}:jobs": {"a": job}}}))
    try:
        load_stack_file(file, root=root)
    except SpecError as error:
        return [str(p).split(": ", 1)[1] for p in error.problems]
    return []


def test_a_trainer_path_must_stay_inside_the_project_root(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.copytree(project / "trainers" / "example", outside)
    (project / "trainers" / "linked").symlink_to(outside, target_is_directory=True)
    key = f"{NAMESPACE}:jobs.a.trainer.path"
    assert trainer_problems(project, "trainers/example") == []
    (up,) = trainer_problems(project, "../elsewhere")
    assert up.startswith(f"{key}: '../elsewhere': leads out of the project root with ..")
    (absolute,) = trainer_problems(project, str(outside))
    assert absolute.startswith(f"{key}: '/") and absolute.endswith("': is an absolute path; allowed: a folder "
                                                                   "relative to the project root (where Pulumi.yaml "
                                                                   "is), inside it")
    (linked,) = trainer_problems(project, "trainers/linked")
    assert linked.startswith(f"{key}: 'trainers/linked': leads out of the project root through a symbolic link")


def test_a_link_out_of_the_trainer_is_refused_with_the_link_named(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$not-for-the-bucket\n")
    link = project / "trainers" / "example" / "trainer" / "data.txt"
    link.symlink_to(secret)
    (problem,) = trainer_problems(project, "trainers/example")
    assert f"{link} is a symbolic link to {secret}, outside the trainer folder" in problem
    with pytest.raises(BuildError, match=f"{link} is a symbolic link to {secret}"):
        build_sdist(project / "trainers" / "example", tmp_path / "build")
    link.unlink()
    (project / "trainers" / "example" / "etc").symlink_to("/etc", target_is_directory=True)
    with pytest.raises(BuildError, match="etc is a symbolic link to /etc, outside the trainer folder"):
        build_sdist(project / "trainers" / "example", tmp_path / "build")


def test_the_archive_holds_the_trainer_without_hidden_files_caches_or_vcs(project: Path, tmp_path: Path) -> None:
    trainer = project / "trainers" / "example"
    own = sorted(p.relative_to(trainer).as_posix() for p in trainer.rglob("*") if p.is_file())
    for junk in (".env", ".git/config", "trainer/__pycache__/task.cpython-311.pyc", "trainer/task.pyc",
                 ".venv/lib/x.py", "venv/bin/python", "trainer/.secret.json", "example_trainer.egg-info/PKG-INFO",
                 ".DS_Store", ".idea/workspace.xml"):
        (trainer / junk).parent.mkdir(parents=True, exist_ok=True)
        (trainer / junk).write_text("not for the bucket\n")
    (trainer / "trainer" / "alias.py").symlink_to(trainer / "trainer" / "task.py")  # inside: its content goes in
    sdist = build_sdist(trainer, tmp_path / "build")
    with tarfile.open(sdist.path) as archive:
        names = sorted(m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile())
        assert not any(m.issym() or m.islnk() for m in archive.getmembers())
    assert names == sorted([*own, "PKG-INFO", "trainer/alias.py"])


# --- Secrets stay secret --------------------------------------------------------------------------------------

def run_stack(config_changes: dict[str, Any], tmp_path: Path) -> Any:
    """A stack that creates its buckets and runs one job, under Pulumi's mocks."""
    job = {"trainingInput": {**JOB["trainingInput"], "packageUris": ["gs://my-code/t.tar.gz"]}}
    config: dict[str, Any] = {"gcp:project": "my-ml-test", f"{NAMESPACE}:backend": "ai-platform",
                              f"{NAMESPACE}:enableApis": False, f"{NAMESPACE}:jobs": {"train": job}}
    config.update(config_changes)
    text, secrets = pulumi_config({"config": config})
    saved = os.environ.get(BUILD_DIR_ENV)
    os.environ[BUILD_DIR_ENV] = str(tmp_path / "build")
    try:
        return run_program("t", text, secrets)
    finally:
        if saved is None:
            os.environ.pop(BUILD_DIR_ENV, None)
        else:
            os.environ[BUILD_DIR_ENV] = saved


def test_a_secret_at_any_depth_keeps_every_input_that_carries_it_secret(tmp_path: Path) -> None:
    """`pulumi config set --secret --path 'gcp-training-jobs:jobs.train.trainingInput.args[1]'`: the jobs key holds a
    secret, and every job input built from it is secret."""
    job = {"trainingInput": {**JOB["trainingInput"], "packageUris": ["gs://my-code/t.tar.gz"],
                             "args": ["--token", {"secure": "v1:AAAA:BBBB"}]}}
    recording = run_stack({f"{NAMESPACE}:jobs": {"train": job}}, tmp_path)
    jobs = recording.of_type("pulumi-python:dynamic/training:TrainingJob")
    assert jobs and all(job.secrets == ["job"] for job in jobs)
    carrying = [r for r in recording.resources if "[secret]" in repr(r.inputs)]  # the offline stand-in
    assert {r.type for r in carrying} == {"pulumi-python:dynamic/training:TrainingJob"}
    assert all(r.secrets for r in carrying)


@pytest.mark.parametrize("labels", [
    {f"{NAMESPACE}:labels": {"env": "staging", "owner": {"secure": "v1:AAAA:BBBB"}}},
    {f"{NAMESPACE}:jobs": {"train": {**JOB, "labels": {"owner": {"secure": "v1:AAAA:BBBB"}}}}},
])
def test_a_secret_label_is_refused_with_the_reason_and_what_to_do_instead(tmp_path: Path,
                                                                          labels: dict[str, Any]) -> None:
    """A label reaches Google in plain text (anyone who can view the job, billing exports): a secret one would not
    stay secret, however Pulumi masks it in the state."""
    path = tmp_path / "Pulumi.t.yaml"
    config = {"gcp:project": "my-ml-test", f"{NAMESPACE}:jobs": {"train": JOB}, **labels}
    path.write_text(yaml.safe_dump({"config": config}))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path, root=tmp_path)
    key = "labels.owner" if f"{NAMESPACE}:labels" in labels else "jobs.train.labels.owner"
    (problem,) = [p for p in caught.value.problems if "secret" in p.message]
    assert problem.path == f"{NAMESPACE}:{key}"
    assert "is a secret (`pulumi config set --secret`), and a label is sent to Google in plain text" in problem.message
    assert "Secret Manager" in problem.message and "v1:AAAA" not in str(problem)


def test_a_secret_project_keeps_the_job_project_secret(tmp_path: Path) -> None:
    recording = run_stack({"gcp:project": {"secure": "v1:AAAA:CCCC"}}, tmp_path)
    for job in recording.of_type("pulumi-python:dynamic/training:TrainingJob"):
        assert "project" in job.secrets


def test_bucket_label_outputs_are_made_secret_with_the_labels() -> None:
    args = pulumi.ResourceTransformationArgs(None, "gcp:storage/bucket:Bucket", "b", {"labels": {}},  # type: ignore[arg-type]
                                             pulumi.ResourceOptions())
    result = stack_module._secret_labels(args)
    assert result is not None and set(result.opts.additional_secret_outputs or []) >= \
        {"labels", "effectiveLabels", "pulumiLabels"}
    other = pulumi.ResourceTransformationArgs(None, "gcp:storage/bucketObject:BucketObject", "o", {},  # type: ignore[arg-type]
                                              pulumi.ResourceOptions())
    assert stack_module._secret_labels(other) is None

