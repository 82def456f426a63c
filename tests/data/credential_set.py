"""A held-out set of values a job may carry, as (name it is given under, value): credentials of the kinds a scan has
missed (positives) and ordinary values a job carries (negatives). tests/test_credential_set.py holds the scan to it,
and benchmarks/credential_scanners.py measures detect-secrets against the same set. Every credential here is made up
(its characters are random, or Google's and the vendors' documented example shapes)."""

from __future__ import annotations

import base64

_GH = "ghp_" + "R4nd0mT0k3nV4lu3" + "abcdEFGHijklMNOPqrst"
POSITIVES: tuple[tuple[str, str], ...] = (
    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ7pL2sK9d"),
    ("DB_KEY", "Zq8vN3xW7tL1pR5mK2sJ9"),
    ("GCS_HMAC_KEY", "a8Fj2kLq9ZxW3vB7nM4pR6tY1uI0oP5s"),
    ("GOOGLE_CREDENTIALS", "eyAidHlwZSI6ICJzZXJ2aWNlX2FjY291bnQiIH0Kx9"),
    ("MY_CREDENTIALS_JSON", "Tm90UmVhbGx5QVNlY3JldEJ1dExvb2tzTGlrZU9uZQ"),
    ("", "--db-url=postgresql://trainer:s3cr3t-Passw0rd@10.0.0.5:5432/runs"),
    ("", "https://deploy:Xk9%21mP2q@artifacts.corp.example/simple"),
    ("", "--auth=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
         "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    ("", "--access-token=ya29.a0AfH6SMBx7rT9kLmNpQrStUvWxYz0123456789AbCdEf"),
    ("", "--notify=https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFGH/Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"),
    ("", "--hub-auth=" + base64.b64encode(_GH.encode()).decode()),
    ("", "--registry-auth=" + base64.b64encode(b"trainer:" + _GH.encode()).decode()),
    ("--password", "P@ss!w0rd#2024"),
    ("", "--password=Tr0ub4dor&3!x"),
    ("--db-password", "hunter2!!"),
    ("DB_PASSWORD", "c0rrect horse"),
    ("", "--api_key=" + "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
)
NEGATIVES: tuple[tuple[str, str], ...] = (
    ("", "us-central1"), ("", "europe-west4-a"), ("REGION", "asia-northeast1"),
    ("", "us-central1-docker.pkg.dev/my-ml-prod/trainers/resnet:2026.11.30-7f3a9c1"),
    ("", "gcr.io/my-ml-prod/trainer@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("GIT_SHA", "3d0cfa3a7e1f2b9c8d4e5f60718293a4b5c6d7e8"), ("", "--commit=3d0cfa3a7e1f2b9c8d4e5f60718293a4b5c6d7e8"),
    ("RUN_ID", "run-20261130-142233-7f3a9c"), ("", "--run-id=5f0c9a7e-2b1d-4c3e-9f8a-7b6c5d4e3f2a"),
    ("", "--data=gs://my-ml-prod-data/imagenet/train-00000-of-01024.tfrecord"),
    ("", "--output=gs://my-ml-prod-jobs/jobs/resnet/${jobDir}"),
    ("", "--learning_rate=0.0003"), ("", "--batch_size=256"), ("", "--max_tokens=4096"),
    ("", "--tokenizer=google/t5-v1_1-base"), ("", "--sort_key=created_at"), ("CACHE_KEY", "v2"),
    ("", "--optimizer=adamw"), ("", "--warmup_steps=2000"), ("", "--model_dir=${jobDir}"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/var/secrets/google/key.json"),
    ("--password-file", "/run/secrets/db-password"), ("DB_PASSWORD_SECRET", "projects/p/secrets/db/versions/latest"),
    ("DB_PASSWORD", "${DB_PASSWORD}"), ("--password", "$DB_PASSWORD"),
    ("", "--endpoint=https://us-central1-aiplatform.googleapis.com/"),
    ("", "--mlflow=https://mlflow.corp.example:5000/"),
    ("", "--hf-model=meta-llama/Llama-3.1-8B-Instruct"), ("WANDB_PROJECT", "resnet-imagenet-2026"),
    ("", "--checkpoint=gs://b/ckpt/step-000120000/model.safetensors"),
    ("", "--tensorboard=projects/123456789/locations/us-central1/tensorboards/4567890123"),
    ("", "--dataset=projects/my-ml-prod/locations/us-central1/datasets/1234567890123456789"),
    ("NCCL_SOCKET_IFNAME", "eth0"), ("", "--seed=1234567890"), ("", "--experiment=ResNet50v2ImageNet1kBaseline2026"),
)
