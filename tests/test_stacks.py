"""The real __main__.py run per stack under Pulumi's mocks: what each stack registers, and in what order.

Mocks never call providers: the TPU service account lookup's provider is tested directly at
the end, against the loopback emulator over real HTTP.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dill  # noqa: E402
import pulumi  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402
from pulumi.dynamic import Config, ConfigureRequest  # noqa: E402

from gcp_training_jobs.cli.plan.mocks import Recording, Registration, mocked_pulumi, pulumi_config, run_program  # noqa: E402
from gcp_training_jobs.emulator import Emulator, project_number  # noqa: E402
from gcp_training_jobs.jobspec.core.names import NAMESPACE, TODAY_ENV  # noqa: E402
from gcp_training_jobs.resources import stack as stack_module  # noqa: E402
from gcp_training_jobs.resources.settings import load_stack_file  # noqa: E402
from gcp_training_jobs.resources.stack import build_stack  # noqa: E402
from gcp_training_jobs.resources.tpu_access import ROLE, TpuServiceAccountProvider  # noqa: E402
from gcp_training_jobs.resources.trainer_package import BUILD_DIR_ENV  # noqa: E402

STACKS = ROOT / "stacks"
BUCKET = "gcp:storage/bucket:Bucket"
OBJECT = "gcp:storage/bucketObject:BucketObject"
SERVICE = "gcp:projects/service:Service"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
JOB = "pulumi-python:dynamic/training:TrainingJob"
LOOKUP = "pulumi-python:dynamic/training:TpuServiceAccount"


@pytest.fixture(scope="module", autouse=True)
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Trainer archives go to a temporary folder, not the repository's .build/."""
    folder = tmp_path_factory.mktemp("build")
    saved = os.environ.get(BUILD_DIR_ENV)
    os.environ[BUILD_DIR_ENV] = str(folder)
    yield folder
    if saved is None:
        os.environ.pop(BUILD_DIR_ENV, None)
    else:
        os.environ[BUILD_DIR_ENV] = saved


def stack_config(name: str, **overrides: Any) -> dict[str, Any]:
    """A repository stack's config mapping, with keys of our namespace replaced (None: removed)."""
    config = yaml.safe_load((STACKS / f"Pulumi.{name}.yaml").read_text())["config"]
    for key, value in overrides.items():
        full = f"{NAMESPACE}:{key}"
        if value is None:
            config.pop(full, None)
        else:
            config[full] = value
    return config


def run(name: str, config: dict[str, Any] | None = None) -> Recording:
    """Run the real __main__.py for a stack, as `pulumi up` would, under mocks."""
    text, secrets = pulumi_config({"config": config if config is not None else stack_config(name)})
    return run_program(name, text, secrets)


@pytest.fixture(scope="module")
def recordings(build_dir: Path) -> dict[str, Recording]:
    return {name: run(name) for name in ("dev", "dev-ai-platform", "staging", "prod")}


def one(recording: Recording, typ: str) -> Registration:
    found = recording.of_type(typ)
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def names(recording: Recording, typ: str) -> set[str]:
    return {r.name for r in recording.of_type(typ)}


# --- Buckets ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dev", "staging", "prod"])
def test_buckets_are_private_regional_and_checkpoint_safe(recordings: dict[str, Recording], name: str) -> None:
    buckets = {r.name: r.inputs for r in recordings[name].of_type(BUCKET)}
    assert set(buckets) == {f"{name}-packages", f"{name}-job-dir"}
    for inputs in buckets.values():
        assert inputs["uniformBucketLevelAccess"] is True
        assert inputs["publicAccessPrevention"] == "enforced"
        assert inputs["location"] == "US-CENTRAL1"
        assert inputs["project"] == f"my-ml-{name}"
        assert inputs["labels"]["managed-by"] == "pulumi" and inputs["labels"]["env"] == name
    job_dir, staging = buckets[f"{name}-job-dir"], buckets[f"{name}-packages"]
    assert job_dir["versioning"] == {"enabled": True}, "a restarted GPU VM resumes from its last checkpoint"
    assert staging["versioning"] == {"enabled": False}
    retention = {"dev": 7, "staging": 30, "prod": 90}[name]
    assert staging["lifecycleRules"] == [{"action": {"type": "Delete"}, "condition": {"age": retention}}]
    assert job_dir["lifecycleRules"] == [{"action": {"type": "Delete"},
                                          "condition": {"daysSinceNoncurrentTime": 30, "withState": "ARCHIVED"}}]
    assert job_dir["forceDestroy"] is (name == "dev")


def test_existing_buckets_are_used_not_created(build_dir: Path) -> None:
    given = {"staging": "team-packages", "jobDir": "team-checkpoints"}
    recording = run("dev-ai-platform", stack_config("dev-ai-platform", buckets=given))
    assert recording.of_type(BUCKET) == []
    assert one(recording, OBJECT).inputs["bucket"] == "team-packages"
    ti = one(recording, JOB).inputs["job"]["trainingInput"]
    assert ti["jobDir"] == "gs://team-checkpoints/jobs/resnet"
    assert ti["packageUris"][0].startswith("gs://team-packages/trainers/example_trainer-")
    assert (recording.outputs["stagingBucket"], recording.outputs["jobDirBucket"]) == \
        ("team-packages", "team-checkpoints")
    staging = run("staging", stack_config("staging", buckets=given))
    spec = one(staging, JOB).inputs["job"]["jobSpec"]
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://team-checkpoints/jobs/l4-trial"}


def test_one_bucket_given_the_other_created(build_dir: Path) -> None:
    recording = run("prod", stack_config("prod", buckets={"jobDir": "prod-checkpoints"}))
    assert names(recording, BUCKET) == {"prod-packages"}
    assert one(recording, JOB).inputs["job"]["trainingInput"]["jobDir"] == "gs://prod-checkpoints/jobs/distributed"


# --- The TPU grant ------------------------------------------------------------------------------------------


def test_dev_ai_platform_grants_ml_service_agent_to_the_looked_up_tpu_account(
        recordings: dict[str, Recording]) -> None:
    dev = recordings["dev-ai-platform"]
    member = one(dev, IAM_MEMBER).inputs
    assert member == {"project": "my-ml-dev", "role": ROLE,
                      "member": "serviceAccount:(from projects.getConfig at apply)"}
    assert one(dev, LOOKUP).inputs["project"] == "my-ml-dev"
    assert dev.outputs["tpuServiceAccount"] == "(from projects.getConfig at apply)"


@pytest.mark.parametrize("name", ["dev", "staging", "prod"])
def test_vertex_stacks_grant_nothing(recordings: dict[str, Recording], name: str) -> None:
    """The grant is AI Platform Training's (tpuAccess.grant auto): dev's TPU job on Vertex AI needs none."""
    recording = recordings[name]
    assert recording.of_type(IAM_MEMBER) == [] and recording.of_type(LOOKUP) == []
    assert "tpuServiceAccount" not in recording.outputs


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "staging", "prod"])
def test_no_stack_owns_a_whole_role_or_policy(recordings: dict[str, Recording], name: str) -> None:
    """IAMBinding and IAMPolicy replace a role's (or the project's) members: only additive IAMMember is used."""
    iam = [r.type for r in recordings[name].resources if "iam" in r.type.lower()]
    assert all(t == IAM_MEMBER for t in iam), iam
    assert not [r for r in recordings[name].resources if "IAMBinding" in r.type or "IAMPolicy" in r.type]


def test_a_given_tpu_service_account_needs_no_lookup(build_dir: Path) -> None:
    email = "service-123456789012@cloud-tpu.iam.gserviceaccount.com"
    recording = run("dev-ai-platform", stack_config("dev-ai-platform", tpuAccess={"serviceAccount": email}))
    assert recording.of_type(LOOKUP) == []
    assert one(recording, IAM_MEMBER).inputs["member"] == f"serviceAccount:{email}"
    assert recording.outputs["tpuServiceAccount"] == email


def test_grant_false_turns_the_grant_off(build_dir: Path) -> None:
    recording = run("dev-ai-platform", stack_config("dev-ai-platform", tpuAccess={"grant": False}))
    assert recording.of_type(IAM_MEMBER) == [] and recording.of_type(LOOKUP) == []


# --- APIs ---------------------------------------------------------------------------------------------------


def test_only_the_apis_each_stack_needs_and_never_disabled(recordings: dict[str, Recording]) -> None:
    services = {name: {r.inputs["service"] for r in rec.of_type(SERVICE)} for name, rec in recordings.items()}
    assert services["dev-ai-platform"] == {"storage.googleapis.com", "ml.googleapis.com",
                                           "cloudresourcemanager.googleapis.com"}
    assert services["dev"] == services["staging"] == services["prod"] == {
        "storage.googleapis.com", "aiplatform.googleapis.com", "cloudquotas.googleapis.com"}
    for recording in recordings.values():
        for service in recording.of_type(SERVICE):
            assert service.inputs["disableOnDestroy"] is False
            assert service.inputs["disableDependentServices"] is False


def test_enable_apis_false_enables_nothing(build_dir: Path) -> None:
    recording = run("prod", stack_config("prod", enableApis=False))
    assert recording.of_type(SERVICE) == []
    assert recording.of_type(JOB)


# --- Jobs ---------------------------------------------------------------------------------------------------


def test_jobs_wait_for_their_package_grant_buckets_and_apis(recordings: dict[str, Recording]) -> None:
    """Explicit dependencies: the job's inputs alone would not order it after the upload or the grant."""
    dev = recordings["dev-ai-platform"]
    job = one(dev, JOB)
    deps = set(job.dependencies)
    for typ in (OBJECT, IAM_MEMBER, LOOKUP, BUCKET, SERVICE):
        for reg in dev.of_type(typ):
            assert reg.urn in deps, f"{job.name} does not wait for {reg.type} {reg.name}"


def test_packages_and_grant_do_not_wait_for_jobs(recordings: dict[str, Recording]) -> None:
    dev = recordings["dev-ai-platform"]
    job_urn = one(dev, JOB).urn
    assert all(job_urn not in r.dependencies for r in dev.resources)
    assert one(dev, OBJECT).urn not in one(dev, IAM_MEMBER).dependencies


def test_dev_ai_platform_job_is_the_guide_job_with_package_job_dir_and_model_dir_filled_in(
        recordings: dict[str, Recording]) -> None:
    dev = recordings["dev-ai-platform"]
    job = one(dev, JOB).inputs
    obj = one(dev, OBJECT).inputs
    ti = job["job"]["trainingInput"]
    assert (job["backend"], job["project"], job["name"]) == ("ai-platform", "my-ml-dev", "resnet")
    assert ti["scaleTier"] == "BASIC_TPU" and ti["runtimeVersion"] == "1.12" and ti["region"] == "us-central1"
    assert ti["pythonModule"] == "resnet.resnet_main"
    assert ti["packageUris"] == [f"gs://dev-ai-platform-packages/{obj['name']}"]  # buckets are named by stack
    assert ti["jobDir"] == "gs://dev-ai-platform-job-dir/jobs/resnet"
    assert ti["args"] == ["--data_dir=gs://cloud-tpu-test-datasets/fake_imagenet",
                          "--model_dir=gs://dev-ai-platform-job-dir/jobs/resnet"]
    assert job["job"]["labels"] == {"env": "dev", "team": "ml-platform"}


def test_dev_job_is_the_guide_tpu_job_on_vertex_in_a_custom_container(recordings: dict[str, Recording]) -> None:
    """The TPU guide's BASIC_TPU shape on Vertex AI: its code a container (no package is built), the sample's module its
    command, the guide's arguments with the job dir filled in."""
    dev = recordings["dev"]
    job = one(dev, JOB).inputs
    ti = job["job"]["trainingInput"]
    assert (job["backend"], job["project"], job["name"]) == ("vertex", "my-ml-dev", "resnet")
    assert ti["scaleTier"] == "BASIC_TPU" and ti["region"] == "us-central1" and "runtimeVersion" not in ti
    assert ti["masterConfig"] == {
        "imageUri": "us-central1-docker.pkg.dev/my-ml-dev/trainers/example:0.1",
        "containerCommand": ["python", "-m", "resnet.resnet_main"],
        "containerArgs": ["--data_dir=gs://cloud-tpu-test-datasets/fake_imagenet",
                          "--model_dir=gs://dev-job-dir/jobs/resnet"]}
    assert ti["jobDir"] == "gs://dev-job-dir/jobs/resnet" and "packageUris" not in ti
    assert dev.of_type(OBJECT) == []
    assert job["job"]["labels"] == {"env": "dev", "team": "ml-platform"}


def test_prod_job_is_the_guide_cluster_shape_on_current_gpus_in_wire_form(recordings: dict[str, Recording]) -> None:
    ti = one(recordings["prod"], JOB).inputs["job"]["trainingInput"]
    assert (ti["masterType"], ti["workerType"], ti["parameterServerType"]) == \
        ("a2-ultragpu-8g", "a2-ultragpu-8g", "n1-highmem-8")
    assert (ti["workerCount"], ti["parameterServerCount"]) == ("3", "3"), "int64 travels as a string"
    assert ti["masterConfig"]["acceleratorConfig"] == {"type": "NVIDIA_A100_80GB", "count": "8"}
    assert ti["workerConfig"]["acceleratorConfig"] == {"type": "NVIDIA_A100_80GB", "count": "8"}
    assert ti["jobDir"] == "gs://prod-job-dir/jobs/distributed"
    assert ti["args"][-1] == "--model-dir=gs://prod-job-dir/jobs/distributed"
    assert "packageUris" not in ti, "a custom container carries its code"


def test_staging_job_is_a_custom_job_spec_with_its_job_dir_filled_in(recordings: dict[str, Recording]) -> None:
    job = one(recordings["staging"], JOB).inputs
    assert (job["backend"], job["name"]) == ("vertex", "l4-trial")
    assert set(job["job"]) == {"jobSpec", "region", "labels"}
    assert job["job"]["region"] == "us-central1"
    assert job["job"]["labels"] == {"env": "staging", "team": "ml-platform", "purpose": "trial"}
    spec = job["job"]["jobSpec"]
    (pool,) = spec["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                   "acceleratorCount": 1}
    assert pool["replicaCount"] == "1", "int64 travels as a string"
    assert pool["containerSpec"]["args"][-1] == "--model-dir=gs://staging-job-dir/jobs/l4-trial"
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://staging-job-dir/jobs/l4-trial"}
    assert spec["scheduling"] == {"strategy": "SPOT", "timeout": "7200s"}


def test_a_job_spec_with_a_trainer_gets_the_package_in_its_python_pools(build_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TODAY_ENV, "2024-06-01")  # a day the prebuilt tf-gpu.2-11 executor was still available
    config = stack_config("staging")
    config[f"{NAMESPACE}:jobs"]["l4-trial"] = {"trainer": {"path": "trainers/example"}, "jobSpec": {
        "workerPoolSpecs": {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                            "acceleratorCount": 1},
                            "replicaCount": 1,
                            "pythonPackageSpec": {
                                "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                                "pythonModule": "trainer.task", "args": ["--model-dir=${jobDir}"]}},
        "baseOutputDirectory": {"outputUriPrefix": "gs://elsewhere/out"},
        "scheduling": {"strategy": "SPOT"}}}
    recording = run("staging", config)
    job, package = one(recording, JOB), one(recording, OBJECT)
    (pool,) = job.inputs["job"]["jobSpec"]["workerPoolSpecs"]
    assert pool["pythonPackageSpec"]["packageUris"] == [f"gs://staging-packages/{package.inputs['name']}"]
    assert pool["pythonPackageSpec"]["args"] == ["--model-dir=gs://elsewhere/out"], "the output dir given: the job dir"
    assert package.urn in job.dependencies


def test_guardrails_and_protection_reach_each_job(recordings: dict[str, Recording], build_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    prod = one(recordings["prod"], JOB).inputs
    assert prod["guardrails"] == {"allowedAccelerators": ["NVIDIA_L4", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB"],
                                  "maxAcceleratorsPerJob": 48, "maxAcceleratorsPerStack": 64,
                                  "requiredLabels": ["env", "team"], "spotOnly": False, "maxHourlyUsd": 200.0,
                                  "maxJobCostUsd": 35000.0, "requireTimeout": False, "protectJobs": True}
    assert prod.get("protect") is None, "unset: the stack's protectJobs decides"
    assert one(recordings["staging"], JOB).inputs["guardrails"]["spotOnly"] is True
    options: dict[str, pulumi.ResourceOptions] = {}
    real = stack_module.TrainingJob

    def recording_job(name: str, *args: Any, opts: pulumi.ResourceOptions | None = None, **kwargs: Any) -> Any:
        options[name] = opts or pulumi.ResourceOptions()
        return real(name, *args, opts=opts, **kwargs)

    monkeypatch.setattr(stack_module, "TrainingJob", recording_job)
    config = stack_config("prod")
    config[f"{NAMESPACE}:jobs"]["distributed"].update(protect=False, retainOnDelete=True)
    job = one(run("prod", config), JOB)
    assert job.inputs["protect"] is False
    assert options["distributed"].retain_on_delete is True
    run("staging")
    assert not options["l4-trial"].retain_on_delete


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "staging", "prod"])
def test_outputs_are_exported(recordings: dict[str, Recording], name: str) -> None:
    outputs = recordings[name].outputs
    job_names = set(yaml.safe_load((STACKS / f"Pulumi.{name}.yaml").read_text())["config"][f"{NAMESPACE}:jobs"])
    assert outputs["backend"] == ("ai-platform" if name == "dev-ai-platform" else "vertex")
    assert (outputs["stagingBucket"], outputs["jobDirBucket"]) == (f"{name}-packages", f"{name}-job-dir")
    assert set(outputs["jobs"]) == job_names
    for job in outputs["jobs"].values():
        assert set(job) == {"jobId", "state", "consoleUrl"}


def test_the_jobs_output_is_one_value_and_a_stack_without_jobs_exports_none(build_dir: Path) -> None:
    """`jobs` is exported as one value, known once every job's outputs are (a preview shows it to come, never as an
    empty map of values not known yet); a stack of no jobs exports no `jobs: {}`."""
    from pulumi.runtime import settings as runtime_settings

    from gcp_training_jobs.cli.plan.mocks import mocked_pulumi
    from gcp_training_jobs.resources.settings import load_stack_file
    from gcp_training_jobs.resources.stack import build_stack

    text, secrets = pulumi_config({"config": stack_config("staging")})
    with mocked_pulumi("staging", text, secrets):
        build_stack(load_stack_file(STACKS / "Pulumi.staging.yaml"))
        exported = runtime_settings.get_root_resource().outputs  # type: ignore[union-attr]
        assert isinstance(exported["jobs"], pulumi.Output)
    empty = run("staging", stack_config("staging", jobs={}))
    assert "jobs" not in empty.outputs and empty.outputs["stagingBucket"] == "staging-packages"
    assert not empty.of_type("training:TrainingJob")


@pytest.mark.parametrize("name", ["staging", "prod"])
def test_secret_job_config_makes_the_job_input_secret(build_dir: Path, name: str) -> None:
    config = stack_config(name)
    job = next(iter(config[f"{NAMESPACE}:jobs"].values()))
    args = job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] if "jobSpec" in job \
        else job["trainingInput"]["args"]
    args.append({"secure": "v1:AAAA:BBBB"})
    registered = one(run(name, config), JOB)
    assert registered.secrets == ["job"]
    wire = registered.inputs["job"]
    sent = wire["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] if "jobSpec" in wire \
        else wire["trainingInput"]["args"]
    assert sent[-1] == "[secret]"


def test_a_jobs_encrypted_value_is_secret_where_it_stands_and_the_rest_of_the_job_readable() -> None:
    """`pulumi preview --diff` shows which fields of a job change: only its encrypted values are secret in the `job`
    input (at their depth), never the whole input; another job of the stack, holding none, is not secret at all; a
    secret that reaches the job from elsewhere (the region) still makes it secret as a whole."""
    import asyncio

    from gcp_training_jobs.resources.settings import StackSettings

    at = "jobSpec.workerPoolSpecs[0].containerSpec.args[1]"
    body = {"region": "us-central1", "jobSpec": {"workerPoolSpecs": [{"containerSpec": {"args": ["--epochs=5", "x"]}}]}}
    settings = StackSettings.model_construct().placed(Path("."), frozenset({"jobs"}), frozenset({f"jobs.hub.{at}"}))

    async def check() -> None:
        secret = stack_module._Secrets(settings)
        held = stack_module._job_input("hub", body, settings, secret)
        assert isinstance(held, dict) and held["region"] == "us-central1"
        args = held["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
        assert args[0] == "--epochs=5" and isinstance(args[1], pulumi.Output)
        assert await args[1].is_secret() and await args[1].future() == "x"
        assert body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"][1] == "x"  # the body is not changed
        assert stack_module._job_input("other", body, settings, secret) is body
        regional = settings.placed(Path("."), frozenset({"jobs", "region"}), settings.secret_paths)
        whole = stack_module._job_input("hub", body, regional, stack_module._Secrets(regional))
        assert isinstance(whole, pulumi.Output) and await whole.is_secret()

    loop = asyncio.new_event_loop()  # not asyncio.run: it would unset the loop the later mocked programs use
    try:
        loop.run_until_complete(check())
    finally:
        loop.close()


# --- Trainer packages ---------------------------------------------------------------------------------------


def test_one_package_per_trainer_folder(build_dir: Path) -> None:
    config = stack_config("dev-ai-platform")
    jobs = config[f"{NAMESPACE}:jobs"]
    jobs["again"] = jobs["resnet"]
    recording = run("dev-ai-platform", config)
    assert len(recording.of_type(OBJECT)) == 1 and len(recording.of_type(JOB)) == 2
    uris = {r.inputs["job"]["trainingInput"]["packageUris"][0] for r in recording.of_type(JOB)}
    assert len(uris) == 1


def test_a_changed_trainer_gets_a_new_object_name_and_an_unchanged_one_keeps_it(tmp_path: Path,
                                                                                build_dir: Path) -> None:
    shutil.copy2(ROOT / "__main__.py", tmp_path / "__main__.py")  # a project root of its own: trainers stay inside
    trainer = tmp_path / "trainer-copy"
    shutil.copytree(ROOT / "trainers" / "example", trainer, ignore=shutil.ignore_patterns("__pycache__"))
    config = stack_config("dev-ai-platform")
    config[f"{NAMESPACE}:jobs"]["resnet"]["trainer"] = {"path": "trainer-copy"}

    def package_name() -> tuple[str, str]:
        text, secrets = pulumi_config({"config": config})
        recording = run_program("dev-ai-platform", text, secrets, main=tmp_path / "__main__.py")
        uri = one(recording, JOB).inputs["job"]["trainingInput"]["packageUris"][0]
        return one(recording, OBJECT).inputs["name"], uri

    first, again = package_name(), package_name()
    assert first == again, "the same trainer builds the same archive"
    task = trainer / "resnet" / "resnet_main.py"
    task.write_text(task.read_text() + "\n# changed\n")
    changed = package_name()
    assert changed[0] != first[0] and changed[0].startswith("trainers/example_trainer-")
    assert changed[1].endswith(changed[0]), "the job's packageUris follow the new object: the job is replaced"


def test_a_bad_trainer_path_is_a_clean_error_naming_the_key(build_dir: Path) -> None:
    config = stack_config("dev-ai-platform")
    config[f"{NAMESPACE}:jobs"]["resnet"]["trainer"] = {"path": "trainers/missing"}
    with pytest.raises(pulumi.RunError) as caught:
        run("dev-ai-platform", config)
    assert f"{NAMESPACE}:jobs.resnet.trainer.path: 'trainers/missing'" in str(caught.value)


# --- build_stack under @pulumi.runtime.test -----------------------------------------------------------------


@pytest.fixture
def staging_mocks(build_dir: Path) -> Iterator[None]:
    text, secrets = pulumi_config({"config": stack_config("staging")})
    with mocked_pulumi("staging", text, secrets):
        yield


@pulumi.runtime.test
def test_build_stack_outputs_resolve(staging_mocks: None) -> Any:
    outputs = build_stack(load_stack_file(STACKS / "Pulumi.staging.yaml"))
    job = outputs["jobs"]["l4-trial"]

    def check(values: list[Any]) -> None:
        staging, job_dir, job_id = values
        assert (staging, job_dir, job_id) == ("staging-packages", "staging-job-dir", "(known after apply)")

    return pulumi.Output.all(outputs["stagingBucket"], outputs["jobDirBucket"], job["jobId"]).apply(check)


# --- The lookup's provider, against the emulator ------------------------------------------------------------


def test_tpu_service_account_lookup_reads_get_config(emulator: Emulator) -> None:
    provider = TpuServiceAccountProvider()
    provider.configure(ConfigureRequest(Config({"gcp-training-jobs:apiEndpoint": emulator.url}, "my-team-project")))
    created = provider.create({"project": "my-ml-dev"})
    expected = f"service-{project_number('my-ml-dev')}@cloud-tpu.iam.gserviceaccount.com"
    assert created.id == "projects/my-ml-dev/tpuServiceAccount"
    assert created.outs == {"project": "my-ml-dev", "serviceAccount": expected}
    assert provider.read(created.id, created.outs).outs["serviceAccount"] == expected
    assert provider.diff(created.id, created.outs, {"project": "my-ml-dev"}).changes is False
    assert provider.diff(created.id, created.outs, {"project": "other-project"}).replaces == ["project"]
    assert provider.check({}, {"project": ""}).failures
    provider.delete(created.id, created.outs)  # nothing to delete: a lookup owns nothing
    assert vars(provider) == {"endpoint": emulator.url}, "nothing but the endpoint is pickled into state"
    assert vars(dill.loads(dill.dumps(provider))) == {"endpoint": emulator.url}


# --- The policy pack reads what the stacks send -------------------------------------------------------------


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "staging", "prod"])
def test_the_policy_pack_renders_every_stacks_job_in_either_vocabulary(recordings: dict[str, Recording],
                                                                         name: str) -> None:
    pytest.importorskip("pulumi_policy")
    from policies import pack

    job = one(recordings[name], JOB)
    judged = pack.judged_job(job.name, job.inputs)
    assert judged is not None, f"the pack could not judge {name}'s job: its guardrails would go unchecked"
    facts = judged[1]
    assert facts.region == "us-central1"
    assert (facts.ml_v1, facts.spec_key) == ((True, None) if name == "dev-ai-platform" else (False, "jobSpec"))
