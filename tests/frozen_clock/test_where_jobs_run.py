"""Where a stack's jobs run is one fact (resources.settings.placements): each job's placements in the order `up` tries
them, and the regions its jobs may run in, candidates included. `status` and `spend` look there, over real HTTP to
the emulator: a `placement: cheapest` job made at a candidate outside its written region is found, and a job that
moved keeps its earlier run, in the region it ran in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from google.auth.credentials import AnonymousCredentials
from googleapiclient.discovery import build

from gcp_training_jobs.backends import reservations
from gcp_training_jobs.cli.job_args import DEFAULT_ORGANIZATION
from gcp_training_jobs.cli.live.jobs import current_jobs, find_jobs, open_stack
from gcp_training_jobs.cli.live.spend import spend_document, spend_lines
from gcp_training_jobs.cli.live.status import stack_status, status_lines
from gcp_training_jobs.jobspec.core.names import JOB_LABEL, PLACEMENT_LABEL
from gcp_training_jobs.resources.job_model.identity import identity_of, resource_label, stack_label
from gcp_training_jobs.resources.settings.placements import placements, ranked, regions
from gcp_training_jobs.resources.settings.quota import askers
from tests.frozen_clock.stack_project import PHASE

PROJECT = "gcp-training-jobs"
BOUNDS = {"regions": ["us-central1", "us-east4", "europe-west4"], "strategies": ["STANDARD", "SPOT"]}
L4 = {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
    "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/t:1"}}],
    "scheduling": {"timeout": "7200s"}}


def project_with(tmp_path: Path, url: str, jobs: dict[str, Any]) -> Path:
    """A project of one stack `team` on the emulator (its apiEndpoint), with the placement bounds; its stacks folder."""
    (tmp_path / "Pulumi.yaml").write_text(f"name: {PROJECT}\nruntime: python\nstackConfigDir: stacks\n")
    folder = tmp_path / "stacks"
    folder.mkdir()
    config = {"gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
              "gcp-training-jobs:apiEndpoint": url, "gcp-training-jobs:enableApis": False,
              "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
              "gcp-training-jobs:placement": BOUNDS, "gcp-training-jobs:jobs": jobs}
    (folder / "Pulumi.team.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def made(vertex: Any, region: str, job_id: str, placement: int) -> str:
    """A job of the stack's `train` resource, as the provider labels it, made in `region` at placement `placement`."""
    labels = {**stack_label(PROJECT, "team"),
              **resource_label(identity_of(DEFAULT_ORGANIZATION, PROJECT, "team", "train")), JOB_LABEL: job_id}
    if placement:
        labels[PLACEMENT_LABEL] = str(placement)
    body = {"displayName": job_id, "labels": labels, "jobSpec": L4}
    jobs = vertex.projects().locations().customJobs()
    return str(jobs.create(parent=f"projects/my-proj/locations/{region}", body=body).execute()["name"])


def test_one_function_gives_a_cheapest_jobs_placements_and_the_regions_its_stack_may_run_in(
        tmp_path: Path, emulator: Any) -> None:
    folder = project_with(tmp_path, emulator.url, {"train": {"jobSpec": L4, "placement": "cheapest"},
                                                    "plain": {"jobSpec": L4, "fallbacks": [{"region": "us-west1"}]}})
    settings = open_stack("team", folder).settings
    order = ranked(settings, "train")
    assert [(f.region, f.strategy) for f in placements(settings, "train")] == [(c.region, c.strategy) for c in order]
    assert order[0].strategy == "SPOT" and order[0].hourly == min(c.hourly for c in order)
    assert [f.region for f in placements(settings, "plain")] == ["us-central1", "us-west1"]
    # the quota review asks at the same placements, in the same order
    (train,) = [a for a in askers(settings) if a.name == "train"]
    assert [p.region for p in train.placements] == [c.region for c in order]
    assert regions(settings) == ["europe-west4", "us-central1", "us-east4", "us-west1"]


def test_status_and_spend_find_a_cheapest_job_at_its_candidate_and_its_earlier_run_elsewhere(
        tmp_path: Path, emulator: Any, vertex_client: Any) -> None:
    """`train` is written in us-central1; its first run was made there, the next (a retry moved by a stockout) at its
    candidate in europe-west4: status shows the job where it runs now, its earlier run in the
    region it ran in, and spend counts both."""
    emulator.state.set_phase_seconds(PHASE)
    folder = project_with(tmp_path, emulator.url, {"train": {"jobSpec": L4, "placement": "cheapest"}})
    stack = open_stack("team", folder)
    first = made(vertex_client, "us-central1", "train_aaaa1111", 0)
    emulator.state.advance(1)
    now = made(vertex_client, "europe-west4", "train_bbbb2222", 1)
    emulator.state.advance(3 * PHASE + 60)  # both queued, prepared, ran PHASE seconds and ended
    when = datetime.fromtimestamp(emulator.state.now(), UTC)
    found = find_jobs(stack, sleep=emulator.state.advance)
    assert sorted(str(j.resource["name"]) for j in found) == sorted([first, now])
    (job,) = current_jobs(list(found))
    assert (job.name, job.target.region) == ("train", "europe-west4")
    document = stack_status(stack, [job], when)
    assert document["notFound"] == []
    (shown,) = document["jobs"]
    assert shown["placedAt"]["region"] == "europe-west4" and shown["placedAt"]["strategy"] == "STANDARD"
    assert shown["earlier"] == [{"jobId": "train_aaaa1111", "state": job.history[0].state, "region": "us-central1"}]
    text = "\n".join(status_lines(document))
    assert "candidate 2 of placement: cheapest (europe-west4 STANDARD)" in text, text
    assert "earlier jobs: train_aaaa1111" in text and "(us-central1)" in text, text
    spent = spend_document(stack, found, when - timedelta(days=30), when, None)
    assert sorted((j["region"], round(j["hours"], 2)) for j in spent["jobs"]) == \
        [("europe-west4", 0.5), ("us-central1", 0.5)], spent


def test_spend_says_a_job_on_a_reservation_runs_on_it(tmp_path: Path, emulator: Any, vertex_client: Any) -> None:
    """A job whose pools take a SPECIFIC_RESERVATION adds Vertex AI's management fee only: `spend` says it runs on
    its reservation, never "(on-demand)"."""
    reservation = "projects/my-proj/zones/us-central1-a/reservations/h100s"
    machine = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8,
               "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                       "key": "compute.googleapis.com/reservation-name", "values": [reservation]}}
    spec = {"workerPoolSpecs": [{"machineSpec": machine, "replicaCount": 1,
                                 "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/llm:1"}}]}
    compute = build("compute", "v1", static_discovery=True, credentials=AnonymousCredentials(), cache_discovery=False,
                    client_options={"api_endpoint": reservations.endpoint_of(emulator.url)})
    compute.reservations().insert(project="my-proj", zone="us-central1-a", body={
        "name": "h100s", "specificReservationRequired": True,
        "reservationSharingPolicy": {"serviceShareType": "ALLOW_ALL"},
        "specificReservation": {"count": "1", "instanceProperties": {"machineType": "a3-highgpu-8g"}}}).execute()
    emulator.state.set_phase_seconds(PHASE)
    stack = open_stack("team", project_with(tmp_path, emulator.url, {"train": {"jobSpec": spec}}))
    labels = {**stack_label(PROJECT, "team"), JOB_LABEL: "train_cccc3333",
              **resource_label(identity_of(DEFAULT_ORGANIZATION, PROJECT, "team", "train"))}
    vertex_client.projects().locations().customJobs().create(
        parent="projects/my-proj/locations/us-central1",
        body={"displayName": "train_cccc3333", "labels": labels, "jobSpec": spec}).execute()
    emulator.state.advance(3 * PHASE + 60)
    when = datetime.fromtimestamp(emulator.state.now(), UTC)
    document = spend_document(stack, find_jobs(stack, sleep=emulator.state.advance), when - timedelta(days=1), when,
                              None)
    (row,) = document["jobs"]
    assert (row["rate"], row["reservation"]) == ("reservation", reservation), row
    (line,) = [text for text in spend_lines(document) if "train_cccc3333" in text]
    assert f"on reservation {reservation}: Vertex AI's management fee" in line and "on-demand" not in line, line
