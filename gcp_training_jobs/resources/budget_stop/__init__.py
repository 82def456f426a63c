"""The source of the Cloud Run function a stack's `budget.enforce` deploys (main.py, requirements.txt): shipped as
package data, uploaded as an archive of those two files only (gcp_training_jobs.resources.budget)."""
