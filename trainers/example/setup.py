"""The example trainer package: what `trainer: {path: trainers/example}` in a stack builds and uploads.

Kept runnable on every runtime the stacks name, down to the seed's TensorFlow 1.12 runtime (Python 2.7
by default), so no f-strings here or in the packages.
"""
from setuptools import find_packages, setup

setup(
    name="example-trainer",
    version="0.1.0",
    description="Example training application for gcp-training-jobs (parses its arguments and reports them)",
    packages=find_packages(),
    install_requires=[],
)
