"""The library's version, in one place: pyproject.toml reads it (setuptools' dynamic version), the package exports it
(`gcp_training_jobs.__version__`), the command line prints it (`--version`), and CHANGELOG.md's newest released section
and a release's tag name it (tests/test_release.py holds them together)."""

__version__ = "0.2.0"
