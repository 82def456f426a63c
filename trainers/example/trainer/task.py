# ruff: noqa: UP010, UP031 - this trainer also runs on the seed's runtime 1.12 (Python 2.7)
"""Entry point of the example trainer (pythonModule: trainer.task).

It trains nothing: it shows what a real trainer receives. AI Platform Training passes the job dir as
--job-dir; Vertex AI passes it as the AIP_MODEL_DIR environment variable (from baseOutputDirectory).
Distributed jobs learn their role from TF_CONFIG. A real trainer checkpoints into the job dir and resumes
from the newest checkpoint there, so a GPU VM restarted by a maintenance event picks up where it stopped.
"""
from __future__ import print_function

import argparse
import json
import os
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job-dir", "--job_dir", dest="job_dir", default=os.environ.get("AIP_MODEL_DIR"),
                        help="where outputs and checkpoints go (default: $AIP_MODEL_DIR on Vertex AI)")
    parser.add_argument("--data-dir", "--data_dir", dest="data_dir", help="training data (gs://...)")
    parser.add_argument("--model-dir", "--model_dir", dest="model_dir", help="model output (default: job dir)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", "--batch_size", dest="batch_size", type=int, default=32)
    parser.add_argument("--learning-rate", "--learning_rate", dest="learning_rate", type=float, default=0.01)
    args, unknown = parser.parse_known_args(argv)
    if args.model_dir is None:
        args.model_dir = args.job_dir
    return args, unknown


def cluster_role(environ=None):
    """(task type, index) from TF_CONFIG, ("master", 0) when running alone."""
    environ = os.environ if environ is None else environ
    try:
        task = json.loads(environ.get("TF_CONFIG", "{}")).get("task", {})
    except ValueError:
        task = {}
    return task.get("type", "master"), int(task.get("index", 0))


def main(argv=None):
    args, unknown = parse_args(argv)
    role, index = cluster_role()
    print("example trainer: role %s %d" % (role, index))
    for name in sorted(vars(args)):
        print("  %s = %s" % (name, getattr(args, name)))
    if unknown:
        print("  unrecognised arguments (ignored): %s" % " ".join(unknown))
    if not (args.job_dir or args.model_dir):
        print("no job dir given (--job-dir, --model_dir or $AIP_MODEL_DIR): nowhere to checkpoint",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
