"""The provider's path in states deployed before the rename (see components/resources/job_provider.py)."""
