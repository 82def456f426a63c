"""Shared names and patterns: the one home of every name, default and syntax rule that more than one
layer uses (backend names, the config namespace, defaults, exit codes, id / label / bucket / project /
service-account patterns). Each pattern names where its syntax comes from.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, Literal

# --- Names ------------------------------------------------------------------------------------------

#: The project's config namespace (the `name:` of Pulumi.yaml).
NAMESPACE: Final = "gcp-training-jobs"
#: The console command (pyproject.toml's [project.scripts]), as every message names a command a user runs:
#: `command("status --stack dev")`. `python -m components` is the same command run from a checkout.
COMMAND: Final = "gcp-training-jobs"


def command(args: str) -> str:
    """A command line of this project as a message names it: `gcp-training-jobs ARGS`."""
    return f"{COMMAND} {args}"


#: The training APIs a stack can use, by their setting name.
AI_PLATFORM: Final = "ai-platform"
VERTEX: Final = "vertex"
BACKENDS: Final = (AI_PLATFORM, VERTEX)
#: Vertex AI's service: the API a stack enables, the namespace of its quota metrics, the host of its regional
#: endpoints (`https://REGION-aiplatform.googleapis.com/`).
VERTEX_SERVICE: Final = "aiplatform.googleapis.com"
Backend = Literal["ai-platform", "vertex"]
#: Legacy AI Platform Training was shut down on 2025-01-31: Vertex AI is what runs today.
DEFAULT_BACKEND: Final[Literal["vertex"]] = "vertex"
DEFAULT_REGION: Final = "us-central1"
#: How many times a job that failed for Google's reasons is made again, unless `jobs.NAME.retries` says otherwise,
#: and the most `retries` may say.
DEFAULT_RETRIES: Final = 2
MAX_RETRIES: Final = 10

#: Exit codes of every command: all valid; something invalid; input unreadable (or usage).
EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2

#: The two vocabularies of a job, by their top-level key: AI Platform Training's ml v1 Job (a gcloud config.yaml) and
#: Vertex AI's CustomJobSpec (as `gcloud ai custom-jobs create --config` reads it).
TRAINING_INPUT: Final = "trainingInput"
JOB_SPEC: Final = "jobSpec"
#: A stack's job (or a TrainingJob's `job` input) written as a Vertex AI tuning config, as `gcloud ai hp-tuning-jobs
#: create --config` reads it.
TUNING_JOB: Final = "tuningJob"
#: What a job is created as: a training job (ml v1 Job, Vertex CustomJob) or a Vertex HyperparameterTuningJob.
TRAINING: Final = "training"
TUNING: Final = "tuning"
JOB_KINDS: Final = (TRAINING, TUNING)

#: Job states of the common vocabulary (ml v1's; Vertex AI's JOB_STATE_* map onto them), used in outputs
#: whatever the backend: a job still holding (or about to hold) machines, and a job that is over.
QUEUED: Final = "QUEUED"
PREPARING: Final = "PREPARING"
RUNNING: Final = "RUNNING"
SUCCEEDED: Final = "SUCCEEDED"
FAILED: Final = "FAILED"
CANCELLING: Final = "CANCELLING"
CANCELLED: Final = "CANCELLED"
PAUSED: Final = "PAUSED"
#: A state the API did not give (or one this vocabulary does not know).
STATE_UNSPECIFIED: Final = "STATE_UNSPECIFIED"
ACTIVE_STATES: Final = frozenset({QUEUED, PREPARING, RUNNING})
FINISHED_STATES: Final = frozenset({SUCCEEDED, FAILED, CANCELLED})
#: A job stopped before its end that can be resumed (Vertex AI's JOB_STATE_PAUSED; the Vertex SDK counts it among
#: the states a wait ends on, google/cloud/aiplatform/jobs.py _JOB_COMPLETE_STATES): neither running nor over. A
#: waiting `up` stops and reports it; `status` shows it and it fails nothing; it is still the resource's job
#: (adopted, never made a second time; cancelled on destroy).
PAUSED_STATES: Final = frozenset({PAUSED})
#: The states of a job that is not over: it is the resource's job.
LIVE_STATES: Final = ACTIVE_STATES | PAUSED_STATES

# --- TrainingJob as a resource --------------------------------------------------------------------------

#: TrainingJob's resource name, and its module as a Python dynamic resource: a state holds a job as the dynamic
#: resource (`pulumi-python:dynamic/training:TrainingJob`, what the Python program and stack files register) or as the
#: provider package's (`gcp-training-jobs:index:TrainingJob`, a program in any language). The one spelling of each.
JOB_RESOURCE: Final = "TrainingJob"
DYNAMIC_JOB_MODULE: Final = "training"
DYNAMIC_JOB_TYPE: Final = f"pulumi-python:dynamic/{DYNAMIC_JOB_MODULE}:{JOB_RESOURCE}"
PACKAGE_JOB_TYPE: Final = f"{NAMESPACE}:index:{JOB_RESOURCE}"
JOB_TYPES: Final = (DYNAMIC_JOB_TYPE, PACKAGE_JOB_TYPE)
#: The package's provider, whose explicit instance a stack file's program configures with the stack's config
#: (`jobResource: package`, resources/package/resource.StackProvider).
PACKAGE_PROVIDER_TYPE: Final = f"pulumi:providers:{NAMESPACE}"
#: That provider's inputs: the stack's config as the dynamic provider's `configure` is handed it (`namespace:key` ->
#: text, decrypted), and the Pulumi organization of the jobs' identity (named here, not in the plugin's module: a
#: program importing the provider's protocol beside Google's clients would register google.rpc.Status twice).
STACK_CONFIG_INPUT: Final = "stackConfig"
ORGANIZATION_INPUT: Final = "organization"

# --- Job ids and the label that finds a job again ------------------------------------------------------

#: The label every job carries so a job whose create answer was lost can be found again.
JOB_LABEL: Final = "pulumi-job"
#: The labels that find a job again: whose it is (a hash of the Pulumi organization, project, stack and resource
#: name) and what it runs (a hash of its spec); a live job carrying both is the resource's job, whichever run
#: made it (ARCHITECTURE.md, "Job identity").
RESOURCE_LABEL: Final = "pulumi-resource"
SPEC_LABEL: Final = "pulumi-spec"
#: The label that finds a stack's jobs (`status`, `logs`, `spend`): a hash of the Pulumi project and stack. Not part
#: of a job's identity: never compared by `diff`, never in `pulumi-spec`, so adding it replaced no job; jobs made
#: before it existed are found by their RESOURCE_LABEL instead.
STACK_LABEL: Final = "pulumi-stack"
#: Which fallback alternative and which retry a job is (set only when not 0).
PLACEMENT_LABEL: Final = "pulumi-placement"
RETRY_LABEL: Final = "pulumi-retry"
#: Every label the project adds to a job besides the user's.
SYSTEM_LABELS: Final = (JOB_LABEL, RESOURCE_LABEL, SPEC_LABEL, STACK_LABEL, PLACEMENT_LABEL, RETRY_LABEL)
#: Labels a resource may carry: Resource Manager's "Requirements for labels" (a resource can have up to 64).
MAX_LABELS: Final = 64
#: Random hex digits after a job's name in its id (ids can never be reused, even after a job ends).
JOB_ID_SUFFIX_HEX: Final = 8
#: The longest name whose job id (name + "_" + suffix) still fits a label value (63 characters).
JOB_NAME_MAX: Final = 63 - 1 - JOB_ID_SUFFIX_HEX


def job_id_of(name: str, limit: int = JOB_NAME_MAX) -> str:
    """The one reading of a name as a job id (`JOB_ID`): what is not a letter, digit or `_` becomes `_` (none at
    either end; `job` for nothing left), `job_` before a first character that is not a letter, at most `limit`
    characters. A job's id is its name's (lowercase) plus a suffix (`job_model.inputs.new_job_id`); `render` names
    a file's job by its file name, the settings judge a stack's job under its name's."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "job"
    if not stem[0].isalpha():
        stem = f"job_{stem}"
    return stem[:limit]


def label_value(text: str) -> str:
    """A job id (or any text) as a label value (lowercase, at most 63 characters)."""
    return text.lower()[:63]


# --- Patterns ---------------------------------------------------------------------------------------

#: The longest ml v1 job id `jobs.create` takes (its refusal: "at most 128 characters").
ML_JOB_ID_MAX: Final = 128
#: ml v1 Job.jobId: "letters, numbers and underscores; must start with a letter" (ml.v1.json).
JOB_ID: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: A job's name in a stack: its Pulumi resource name, the stem of its job id and the folder of its job dir.
JOB_NAME: Final = re.compile(r"[a-z][a-z0-9_-]*")
#: Label keys and values: Resource Manager "Requirements for labels" (cloud.google.com/resource-manager/
#: docs/labels-overview): keys start with a lowercase letter, both at most 63 lowercase letters, digits,
#: underscores and dashes.
LABEL_KEY: Final = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE: Final = re.compile(r"[a-z0-9_-]{0,63}")
#: Cloud Storage bucket names: Google's "Bucket names" (https://cloud.google.com/storage/docs/buckets#naming,
#: read 2026-11-26): 3-63 characters of lowercase letters, digits, -, _ and ., starting and ending with a letter or
#: digit; with dots up to 222, each dot-separated part at most 63. `bucket_problem` says which rule a name breaks.
BUCKET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]")
#: The rule in words, for a message ("allowed: ...").
BUCKET_RULE: Final = ("a bucket name of 3 to 63 characters (up to 222 with dots, each dot-separated part at most "
                      "63): lowercase letters, digits, dashes, underscores and dots, starting and ending with a "
                      "letter or digit (https://cloud.google.com/storage/docs/buckets#naming)")


def bucket_problem(name: str) -> str | None:
    """Which of the bucket naming rules (BUCKET_NAME's source) `name` breaks, in words; None when it keeps them."""
    bad = sorted({c for c in name if not (c.isascii() and (c.islower() or c.isdigit()) or c in "-_.")})
    if bad:
        return f"bucket name {name!r} has {' '.join(repr(c) for c in bad)}; allowed: {BUCKET_RULE}"
    longest = 222 if "." in name else 63
    if not 3 <= len(name) <= longest:
        plural = "" if len(name) == 1 else "s"
        return f"bucket name {name!r} is {len(name)} character{plural}; allowed: {BUCKET_RULE}"
    if not (name[0].isalnum() and name[-1].isalnum()):
        return f"bucket name {name!r} starts or ends with {name[0] if not name[0].isalnum() else name[-1]!r}; " \
               f"allowed: {BUCKET_RULE}"
    if long := [part for part in name.split(".") if len(part) > 63]:
        return f"bucket name {name!r} has a dot-separated part of {len(long[0])} characters; allowed: {BUCKET_RULE}"
    return None


#: A shell or template variable left in a value as written: `${BUCKET_NAME}`, `{{ bucket }}`; and, where no `$` may
#: stand (a bucket name), `$BUCKET` too.
UNEXPANDED: Final = re.compile(r"\$\{[^}]*\}|\{\{[^}]*\}\}")
UNEXPANDED_BARE: Final = re.compile(r"\$\{[^}]*\}|\{\{[^}]*\}\}|\$[A-Za-z_][A-Za-z0-9_]*")


def unexpanded_problem(text: str, *, bare: bool = False) -> str | None:
    """The words for a value that still holds a variable (`UNEXPANDED`; `UNEXPANDED_BARE` with `bare`), naming it;
    None when it holds none."""
    found = (UNEXPANDED_BARE if bare else UNEXPANDED).findall(text)
    if not found:
        return None
    named = ", ".join(dict.fromkeys(found))
    return (f"{text!r} holds an unexpanded variable ({named}): the file is read as written, nothing expands it; "
            "allowed: the value itself (expand the variables before the file is read, e.g. envsubst < job.yaml)")


@lru_cache(maxsize=1024)
def gcs_uri_problem(uri: str, *, needs_object: bool = False) -> str | None:
    """What is wrong with a Cloud Storage URI, naming the rule that failed: a variable left unexpanded, gs://, then a
    bucket name that keeps its rules (bucket_problem), then the object's path (not empty where the URI names a file:
    `needs_object`). A pure function of its arguments, remembered (bounded): a folder's jobs name the same
    packages and buckets file after file."""
    if (unexpanded := unexpanded_problem(uri)) is not None:
        return unexpanded
    if uri.startswith("gs://") and unexpanded_problem(uri[5:].partition("/")[0], bare=True) is not None:
        return unexpanded_problem(uri, bare=True)
    if not uri.startswith("gs://"):
        return f"{uri!r} is not a Cloud Storage URI: it does not start with gs://; allowed: gs://BUCKET/PATH"
    bucket, _, path = uri[5:].partition("/")
    if (problem := bucket_problem(bucket)) is not None:
        return f"{uri!r} is not a Cloud Storage URI: its {problem}"
    if needs_object and not path:
        return f"{uri!r} names no object: the path after gs://{bucket}/ is empty; allowed: gs://BUCKET/PATH"
    return None
#: Project ids (cloud.google.com/resource-manager/docs/creating-managing-projects): 6-30 lowercase
#: letters, digits and hyphens, starting with a letter; domain-scoped ids carry a `domain:` prefix.
PROJECT_ID: Final = re.compile(r"(?:[a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")
#: A service account email (IAM "Service accounts": NAME@PROJECT.iam.gserviceaccount.com, and Google-managed
#: agents under other gserviceaccount.com domains such as cloud-tpu.iam.gserviceaccount.com).
SERVICE_ACCOUNT: Final = re.compile(r"[^@\s]+@[a-z0-9.-]+\.gserviceaccount\.com")
#: google.protobuf.Duration in JSON: seconds with up to 9 fractional digits and an "s" ("3600s", "1.5s").
DURATION: Final = re.compile(r"\d+(\.\d{1,9})?s")
#: The most seconds a google.protobuf.Duration holds: "Must be from -315,576,000,000 to +315,576,000,000 inclusive"
#: (10,000 years; https://protobuf.dev/reference/protobuf/google.protobuf/#duration, read 2026-12-02). Vertex AI's
#: reference states no maximum of its own for `Scheduling.timeout`, only its default, 7 days
#: (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/CustomJobSpec#scheduling, read 2026-12-02): this is
#: the bound of a job's timeout as of every other duration (a FLEX_START job's, 7 days, is rules.vertex_spec's).
MAX_DURATION_SECONDS: Final = 315_576_000_000
#: What a duration may be, in every message that refuses one.
DURATION_ALLOWED: Final = f"seconds with an s suffix, e.g. 3600s, at most {MAX_DURATION_SECONDS}s (a protobuf Duration)"


def is_duration(value: object) -> bool:
    """Whether `value` is a google.protobuf.Duration as JSON writes it, within what one holds (DURATION,
    MAX_DURATION_SECONDS): `99999999999999999999s` is not."""
    return (isinstance(value, str) and DURATION.fullmatch(value) is not None
            and float(value[:-1]) <= MAX_DURATION_SECONDS)
#: ml v1 TrainingInput.network: "projects/{project}/global/networks/{network}" (ml.v1.json).
NETWORK: Final = re.compile(r"projects/[^/]+/global/networks/[^/]+")
#: Cloud KMS key names (ml.v1.json EncryptionConfig.kmsKeyName).
KMS_KEY: Final = re.compile(r"projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+")
#: A Cloud Storage location (a region, dual-region or multi-region name).
LOCATION: Final = re.compile(r"[A-Za-z0-9-]+")

# --- Vertex AI CustomJobSpec names (aiplatform.v1.json field descriptions) -----------------------------

#: PersistentResource ids: "The maximum length is 63 characters, and valid characters are
#: /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/" (persistentResources.create, persistentResourceId).
PERSISTENT_RESOURCE_ID: Final = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
#: CustomJobSpec.tensorboard: "projects/{project}/locations/{location}/tensorboards/{tensorboard}".
TENSORBOARD: Final = re.compile(r"projects/[^/]+/locations/(?P<location>[^/]+)/tensorboards/[^/]+")
#: CustomJobSpec.experiment: "projects/{project}/locations/{location}/metadataStores/{metadataStores}/
#: contexts/{experiment-name}"; experimentRun the same with "{experiment-name}-{experiment-run-name}".
EXPERIMENT: Final = re.compile(r"projects/[^/]+/locations/(?P<location>[^/]+)/metadataStores/[^/]+/contexts/[^/]+")
#: EnvVar.name: "Required. Name of the environment variable. Must be a valid C identifier."
ENV_VAR_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# --- Today ---------------------------------------------------------------------------------------------

#: The prefix of every environment variable the library reads (each one typed, bounded and documented in
#: core/env.py, and read into its EnvSettings model).
ENV_PREFIX: Final = "GCP_TRAINING_JOBS_"
#: Date rules (end of support of a GPU, end of availability of a prebuilt container) judge against today's
#: date; this variable (YYYY-MM-DD) sets another "today" for a whole process (tests, or checking a spec
#: against a future date). Options(today=...) sets it for one call.
TODAY_ENV: Final = ENV_PREFIX + "TODAY"
