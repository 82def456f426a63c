"""gcloud's own flags for `validate` and `render`: they complete and, as in gcloud, override a config file.

Two vocabularies, as gcloud has two commands:

- a `trainingInput` config, as `gcloud ai-platform jobs submit training --config` reads it: --scale-tier,
  --region, --runtime-version, --python-version, --module-name, --package-uris (--packages), --job-dir,
  --labels, and per task role --master-/--worker-/--parameter-server- machine-type, accelerator and image-uri
  (plus --worker-count and --parameter-server-count);
- a Vertex AI CustomJobSpec, as `gcloud ai custom-jobs create --config` reads it: the repeatable
  --worker-pool-spec (and --python-package-uris for its Python-package pools), and --labels on a CustomJob.

How gcloud treats them, from its source (lib/googlecloudsdk in the Google Cloud CLI,
https://cloud.google.com/sdk/docs/install, read 2026-11-22):
- command_lib/ml_engine/flags.py: each --*-accelerator is an ArgDict with required keys `type` and `count`;
  the type is an AcceleratorConfig.type enum name in lowercase with hyphens (nvidia-tesla-t4; gcloud's
  ChoiceToEnum also takes NVIDIA_TESLA_T4), the count "must be greater than 0"; --worker-machine-type and
  --worker-count form one group in which both are required (the same for the parameter-server pair), and
  each count is at least 1.
- command_lib/ml_engine/jobs_util.py: --scale-tier choices basic, basic-gpu, basic-tpu, custom, premium-1,
  standard-1 (gcloud's choice type lowercases the value and turns _ into -, so CUSTOM and BASIC_GPU work).
- api_lib/ml_engine/jobs.py, BuildTrainingJob: the file is read first, then every flag given replaces its
  field (an accelerator's type and count, an image URI, a machine type or count one by one, so the rest of a
  role's config stays); --labels replaces the file's labels as a whole.
- command_lib/ai/custom_jobs/flags.py and custom_jobs_util.py: --worker-pool-spec keys; replica-count and
  accelerator-count default to 1; container-image-uri makes a containerSpec, else executor-image-uri /
  python-module (with --python-package-uris) a pythonPackageSpec; an empty spec is an empty pool ({}); the
  flags' pools replace the file's workerPoolSpecs as a whole.
- --labels: "List of label KEY=VALUE pairs to add" (gcloud's labels_util); the values are judged here like
  the file's labels.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gcp_training_jobs.jobspec.core.names import DEFAULT_REGION

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.core.problems import Problem

# The flags are declared for every command's parser (main), so this module imports only names at its top; what
# judges a file with them (problems, errors, the vocabulary detector) is imported where a file is judged.

#: gcloud ai-platform jobs submit training flags that fill (and, as in gcloud, override) trainingInput fields.
GCLOUD_FLAGS = {
    "runtime_version": "runtimeVersion",
    "python_version": "pythonVersion",
    "module_name": "pythonModule",
    "package_uris": "packageUris",
    "job_dir": "jobDir",
    "scale_tier": "scaleTier",
}

#: --scale-tier's choices in gcloud's spelling (jobs_util._SCALE_TIER_CHOICES).
SCALE_TIER_CHOICES = ("basic", "basic-gpu", "basic-tpu", "custom", "premium-1", "standard-1")

#: ml.v1.json AcceleratorConfig.type, without ACCELERATOR_TYPE_UNSPECIFIED (what gcloud's type choice takes).
ML_ACCELERATOR_TYPES = ("NVIDIA_TESLA_K80", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_V100", "NVIDIA_TESLA_P4",
                        "NVIDIA_TESLA_T4", "NVIDIA_TESLA_A100", "TPU_V2", "TPU_V3", "TPU_V2_POD", "TPU_V3_POD",
                        "TPU_V4_POD")

#: Task roles with flags: (trainingInput role, flag prefix, argparse prefix, whether it has a count flag).
ROLE_FLAGS = (("master", "master", "master", False), ("worker", "worker", "worker", True),
              ("parameterServer", "parameter-server", "parameter_server", True))

#: --worker-pool-spec keys gcloud takes (custom_jobs flags._WORKER_POOL_SPEC) that a request can carry.
POOL_KEYS: dict[str, Callable[[str], Any]] = {
    "machine-type": str, "replica-count": int, "accelerator-type": str, "accelerator-count": int,
    "container-image-uri": str, "executor-image-uri": str, "python-module": str,
}
#: Keys for gcloud's local packaging (it builds and pushes a container first): nothing to judge offline.
AUTOPACKAGING_KEYS = ("local-package-path", "script", "output-image-uri", "requirements", "extra-packages",
                      "extra-dirs")

_ML_ONLY = ("scale_tier", "runtime_version", "python_version", "module_name", "package_uris", "job_dir",
            *(f"{a}_{s}" for _, _, a, _ in ROLE_FLAGS for s in ("machine_type", "accelerator", "image_uri")),
            "worker_count", "parameter_server_count")
#: Every flag that completes a file: with none of them given, the file is taken as it is.
_ALL_FLAGS = (*_ML_ONLY, "region_flag", "labels", "worker_pool_spec", "python_package_uris")


def _closest(value: str, options: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def arg_dict(text: str) -> dict[str, str]:
    """gcloud's ArgDict syntax: `k=v,k2=v2` (an empty text is an empty dict)."""
    out: dict[str, str] = {}
    for item in (part for part in text.split(",") if part.strip()):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE; allowed: KEY=VALUE pairs separated by "
                                             "commas (e.g. count=1,type=nvidia-tesla-t4)")
        out[key.strip()] = value.strip()
    return out


def scale_tier(value: str) -> str:
    """--scale-tier as gcloud takes it (any case, - or _) -> the API's enum name (CUSTOM, BASIC_GPU...)."""
    choice = value.strip().replace("_", "-").lower()
    if choice not in SCALE_TIER_CHOICES:
        raise argparse.ArgumentTypeError(f"{value!r} is not a scale tier{_closest(choice, SCALE_TIER_CHOICES)}; "
                                         f"allowed: {', '.join(SCALE_TIER_CHOICES)} (any case)")
    return choice.replace("-", "_").upper()


def positive_count(value: str) -> int:
    """--worker-count / --parameter-server-count: a whole number, at least 1 (gcloud's BoundedInt(1, ...))."""
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number; allowed: 1 or more") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"{count} is too small; allowed: 1 or more")
    return count


def accelerator(value: str) -> dict[str, Any]:
    """--master-accelerator count=N,type=nvidia-tesla-t4 -> {"type": "NVIDIA_TESLA_T4", "count": N}."""
    given = arg_dict(value)
    unknown = sorted(set(given) - {"type", "count"})
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown key {unknown[0]!r}{_closest(unknown[0], ('type', 'count'))}; "
                                         "allowed: count=N,type=TYPE")
    missing = [k for k in ("count", "type") if not given.get(k)]
    if missing:
        raise argparse.ArgumentTypeError(f"{missing[0]} is missing; allowed: both count=N and type=TYPE "
                                         "(e.g. count=1,type=nvidia-tesla-t4)")
    kind = given["type"].upper().replace("-", "_")
    if kind not in ML_ACCELERATOR_TYPES:
        choices = [t.lower().replace("_", "-") for t in ML_ACCELERATOR_TYPES]
        raise argparse.ArgumentTypeError(f"type {given['type']!r} is not an accelerator"
                                         f"{_closest(given['type'].lower().replace('_', '-'), choices)}; "
                                         f"allowed: {', '.join(choices)}")
    try:
        count = int(given["count"])
    except ValueError:
        raise argparse.ArgumentTypeError(f"count {given['count']!r} is not a whole number; allowed: 1 or "
                                         "more") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"count {count} is too small; allowed: 1 or more (greater than 0)")
    return {"type": kind, "count": count}


def labels(value: str) -> dict[str, str]:
    """--labels k=v,k2=v2 -> {"k": "v", "k2": "v2"} (the values are judged with the file's labels)."""
    return arg_dict(value)


def comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def worker_pool_spec(value: str) -> dict[str, Any]:
    """One --worker-pool-spec, its keys checked and its numbers parsed as gcloud does; {} for an empty pool."""
    given = arg_dict(value)
    if not given:
        return {}
    allowed = "machine-type (required), replica-count, accelerator-type, accelerator-count, and " \
              "container-image-uri or executor-image-uri with python-module"
    for key in given:
        if key in AUTOPACKAGING_KEYS:
            raise argparse.ArgumentTypeError(f"{key} needs gcloud's local packaging (it builds and pushes a "
                                             f"container first), which validate and render cannot judge; allowed: "
                                             f"{allowed}")
        if key not in POOL_KEYS:
            raise argparse.ArgumentTypeError(f"unknown key {key!r}{_closest(key, list(POOL_KEYS))}; allowed: "
                                             f"{allowed}")
    if not given.get("machine-type"):
        raise argparse.ArgumentTypeError(f"machine-type is missing; allowed: {allowed}")
    if given.get("container-image-uri") and (given.get("executor-image-uri") or given.get("python-module")):
        raise argparse.ArgumentTypeError("container-image-uri is given with executor-image-uri or python-module; "
                                         "allowed: one of a custom container (container-image-uri) or a Python "
                                         "package on a prebuilt container (executor-image-uri, python-module)")
    spec: dict[str, Any] = {}
    for key, text in given.items():
        try:
            spec[key] = POOL_KEYS[key](text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{key} {text!r} is not a whole number; allowed: 1 or more") from None
    return spec


def worker_pool_specs(specs: list[dict[str, Any]], python_package_uris: list[str] | None = None
                      ) -> list[dict[str, Any]]:
    """The workerPoolSpecs gcloud builds from --worker-pool-spec flags (custom_jobs_util._ConstructSingle-
    WorkerPoolSpec), as plain dicts in Vertex's camelCase; the CustomJobSpec models judge them."""
    pools: list[dict[str, Any]] = []
    for spec in specs:
        if not spec:
            pools.append({})
            continue
        machine: dict[str, Any] = {"machineType": spec["machine-type"]}
        if spec.get("accelerator-type"):
            machine["acceleratorType"] = spec["accelerator-type"].upper().replace("-", "_")
            machine["acceleratorCount"] = spec.get("accelerator-count", 1)
        pool: dict[str, Any] = {"machineSpec": machine, "replicaCount": spec.get("replica-count", 1)}
        if spec.get("container-image-uri"):
            pool["containerSpec"] = {"imageUri": spec["container-image-uri"]}
        elif python_package_uris or spec.get("executor-image-uri") or spec.get("python-module"):
            package = {"executorImageUri": spec.get("executor-image-uri"),
                       "packageUris": list(python_package_uris or []), "pythonModule": spec.get("python-module")}
            pool["pythonPackageSpec"] = {k: v for k, v in package.items() if v is not None}
        pools.append(pool)
    return pools


def vocabulary(data: Any) -> str | None:
    """"ml" for a trainingInput config, "vertex" for a CustomJobSpec (or a CustomJob), "tuning" for a tuning
    config, None for neither, as the one detector (io.vocabulary.vocabulary_of) tells."""
    if not isinstance(data, dict):
        return None
    from gcp_training_jobs.jobspec.io.vocabulary import vocabulary_of

    found = vocabulary_of(data)
    if found == "trainingInput":
        return "ml" if "trainingInput" in data else None
    return "vertex" if found == "customJobSpec" else "tuning"


def _given(args: argparse.Namespace, name: str) -> bool:
    return getattr(args, name, None) is not None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _flag_problems(kind: str | None, args: argparse.Namespace) -> list[Problem]:
    """Flags of the other vocabulary, and gcloud's groups given half (a count without its machine type)."""
    from gcp_training_jobs.jobspec.core.problems import Problem

    problems: list[Problem] = []
    if kind == "vertex":
        problems += [Problem(_flag(n), "applies to a trainingInput config (gcloud ai-platform jobs submit "
                             "training) and this file is a Vertex AI CustomJobSpec; allowed: --worker-pool-spec, "
                             "--python-package-uris, --labels") for n in _ML_ONLY if _given(args, n)]
    elif _given(args, "worker_pool_spec"):
        problems.append(Problem("--worker-pool-spec", "applies to a Vertex AI CustomJobSpec (gcloud ai "
                                "custom-jobs create) and this file is a trainingInput config; allowed: "
                                "--master-machine-type, --master-accelerator, --worker-count, ... (gcloud "
                                "ai-platform jobs submit training's flags)"))
    for _, flag, attr, has_count in ROLE_FLAGS:
        if not has_count:
            continue
        machine, count = f"{attr}_machine_type", f"{attr}_count"
        if _given(args, machine) != _given(args, count):
            one, other = (count, machine) if _given(args, count) else (machine, count)
            problems.append(Problem(_flag(one), f"is given without {_flag(other)}; allowed: both together "
                                    f"(--{flag}-machine-type TYPE --{flag}-count N), as gcloud requires"))
    return problems


def _ml_flags(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """gcloud's BuildTrainingJob: each flag given replaces its field; role configs keep what a flag leaves."""
    raw = data.get("trainingInput")
    if raw is not None and not isinstance(raw, dict):
        return data  # the model names what is wrong with it
    ti = dict(raw or {})
    for flag, field in GCLOUD_FLAGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            ti[field] = value
    if getattr(args, "region_flag", None) is not None:
        ti["region"] = args.region_flag
    for role, _, attr, has_count in ROLE_FLAGS:
        if _given(args, f"{attr}_machine_type"):
            ti[f"{role}Type"] = getattr(args, f"{attr}_machine_type")
        if has_count and _given(args, f"{attr}_count"):
            ti[f"{role}Count"] = getattr(args, f"{attr}_count")
        image, acc = getattr(args, f"{attr}_image_uri", None), getattr(args, f"{attr}_accelerator", None)
        config = ti.get(f"{role}Config")
        if (image or acc) and (config is None or isinstance(config, dict)):
            config = dict(config or {})
            if image:
                config["imageUri"] = image
            if acc:
                current = config.get("acceleratorConfig")
                config["acceleratorConfig"] = {**(current if isinstance(current, dict) else {}), **acc}
            ti[f"{role}Config"] = config
    out = {**data, "trainingInput": ti}
    if getattr(args, "labels", None) is not None:
        out["labels"] = dict(args.labels)
    return out


def _vertex_flags(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """gcloud ai custom-jobs create: the flags' pools replace the file's; --labels go on a CustomJob."""
    out = dict(data)
    specs = getattr(args, "worker_pool_spec", None)
    if specs:
        pools = worker_pool_specs(specs, getattr(args, "python_package_uris", None))
        if isinstance(out.get("jobSpec"), dict):
            out["jobSpec"] = {**out["jobSpec"], "workerPoolSpecs": pools}
        else:
            out["workerPoolSpecs"] = pools
    if getattr(args, "labels", None) is not None and "jobSpec" in out:
        out["labels"] = dict(args.labels)
    return out


def with_flags(data: Any, args: argparse.Namespace) -> Any:
    """The file as gcloud would submit it: flags given on the command line win over the file. SpecError for a
    flag of the other vocabulary or half of one of gcloud's flag groups."""
    kind = vocabulary(data)
    if kind == "tuning":  # gcloud ai hp-tuning-jobs create: its --region and --labels go beside the file
        return data
    if kind == "vertex" and "workerPoolSpecs" not in data and "jobSpec" not in data:
        data = {**data, "workerPoolSpecs": []}  # the pools may all come from --worker-pool-spec
    if not any(_given(args, name) for name in _ALL_FLAGS) and not (kind == "ml" and data["trainingInput"] is None):
        return data  # nothing to add (a null trainingInput still becomes {} below, as gcloud's flags make it)
    problems = _flag_problems(kind, args)
    if problems:
        from gcp_training_jobs.jobspec.core.errors import SpecError

        raise SpecError(problems)
    if kind == "vertex":
        return _vertex_flags(data, args)
    if isinstance(data, dict) and (kind == "ml" or any(_given(args, n) for n in (*_ML_ONLY, "labels"))):
        return _ml_flags(data, args)
    return data


def flag_labels(args: argparse.Namespace) -> dict[str, str] | None:
    """--labels as given (for a CustomJobSpec file, whose labels belong to the CustomJob built around it)."""
    value = getattr(args, "labels", None)
    return dict(value) if value is not None else None


def input_paths(args: argparse.Namespace) -> list[str]:
    """The files to read: the positional PATH(s) and --config (gcloud's name for the config file)."""
    given = getattr(args, "paths", None) or ([args.path] if getattr(args, "path", None) else [])
    return [*given, *([args.config] if getattr(args, "config", None) else [])]


def add_gcloud_flags(p: argparse.ArgumentParser) -> None:
    """gcloud's flags a config is completed with (they win over the file, as in gcloud)."""
    ml = p.add_argument_group("gcloud ai-platform jobs submit training flags (a trainingInput config)")
    ml.add_argument("--config", metavar="CONFIG", help="the config file, as gcloud names it (same as PATH)")
    ml.add_argument("--region", dest="region_flag", metavar="REGION",
                    help=f"trainingInput.region (a file without one gets {DEFAULT_REGION})")
    ml.add_argument("--scale-tier", type=scale_tier, metavar="SCALE_TIER",
                    help=f"trainingInput.scaleTier: {', '.join(SCALE_TIER_CHOICES)} (any case)")
    ml.add_argument("--runtime-version", help="trainingInput.runtimeVersion")
    ml.add_argument("--python-version", help="trainingInput.pythonVersion")
    ml.add_argument("--module-name", help="trainingInput.pythonModule")
    ml.add_argument("--package-uris", "--packages", dest="package_uris", type=comma_list, metavar="URI,...",
                    help="comma-separated gs:// URIs (trainingInput.packageUris)")
    ml.add_argument("--job-dir", help="trainingInput.jobDir")
    ml.add_argument("--labels", type=labels, metavar="KEY=VALUE,...", help="the job's labels (replace the file's)")
    for role, flag, _, has_count in ROLE_FLAGS:
        ml.add_argument(f"--{flag}-machine-type", metavar="TYPE", help=f"trainingInput.{role}Type")
        if has_count:
            ml.add_argument(f"--{flag}-count", type=positive_count, metavar="N",
                            help=f"trainingInput.{role}Count (with --{flag}-machine-type)")
        ml.add_argument(f"--{flag}-accelerator", type=accelerator, metavar="count=N,type=TYPE",
                        help=f"trainingInput.{role}Config.acceleratorConfig (e.g. count=1,type=nvidia-tesla-t4)")
        ml.add_argument(f"--{flag}-image-uri", metavar="URI", help=f"trainingInput.{role}Config.imageUri")
    vx = p.add_argument_group("gcloud ai custom-jobs create flags (a Vertex AI CustomJobSpec)")
    vx.add_argument("--worker-pool-spec", type=worker_pool_spec, action="append", metavar="KEY=VALUE,...",
                    help="one worker pool, repeatable in pool order: machine-type=...,replica-count=...,"
                         "accelerator-type=...,accelerator-count=...,container-image-uri=... (or executor-image-uri"
                         "=...,python-module=...); replaces the file's workerPoolSpecs")
    vx.add_argument("--python-package-uris", type=comma_list, metavar="URI,...",
                    help="gs:// URIs of the Python packages of the --worker-pool-spec pools")
    p.set_defaults(region=DEFAULT_REGION)
