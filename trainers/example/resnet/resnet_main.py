# ruff: noqa: UP010, UP031 - this trainer also runs on the seed's runtime 1.12 (Python 2.7)
"""Entry point with the seed's module name and flags (--data_dir, --model_dir); it trains nothing.

The real sample lives at https://github.com/tensorflow/tpu/tree/r1.12/models/official/resnet; put it in
its own trainer folder (with the seed's relative-import edits) to train ResNet-50 for real.
"""
from __future__ import print_function

import sys

from trainer import task


def main(argv=None):
    args, _ = task.parse_args(argv)
    if not args.data_dir:
        print("resnet_main: --data_dir is required (the seed uses gs://cloud-tpu-test-datasets/fake_imagenet)",
              file=sys.stderr)
        return 2
    print("resnet_main (stand-in): would train ResNet-50 on %s into %s" % (args.data_dir, args.model_dir))
    return task.main(argv)


if __name__ == "__main__":
    sys.exit(main())
