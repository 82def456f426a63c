"""The emulator as a process (its command line, start and stop) and the discovery-schema checker it validates bodies
with.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from gcp_training_jobs.emulator import Emulator, discovery, project_number  # noqa: E402

pytest.register_assert_rewrite("tests.conftest_emulator")  # it is also loaded as a plugin below
from tests.conftest_emulator import build_client  # noqa: E402
from tests.emulator_support import (  # noqa: E402
    PARENT,
    PROJECT,
    control,
    ml_body,
    vertex_body,
    worker_pools,
)

#: Fixtures: emulator (clean state, frozen phases), emulator_server, ml_client, vertex_client, held_delays.


# --------------------------------------------------------------------------------------- the CLI


@pytest.mark.slow
def test_main_cli_serves_until_sigterm() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", "from gcp_training_jobs.emulator import main; main(['--port','0'])"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"emulator listening on (http://127\.0\.0\.1:(\d+)/)", line)
        assert match, line
        assert int(match.group(2)) > 0
        config = build_client("ml", match.group(1)).projects().getConfig(name=PARENT).execute()
        assert config["serviceAccountProject"] == project_number(PROJECT)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0  # a bound on a hang, not a timing
        assert process.stderr is not None and process.stderr.read() == ""  # quiet by default
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_emulator_start_stop_releases_port() -> None:
    emu = Emulator(port=0, phase_seconds=0).start()
    url = emu.url
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url) and emu.port > 0
    assert control(emu, "/_emulator/health")[0] == 200
    emu.stop()
    emu.stop()  # idempotent
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "_emulator/health", timeout=1)


# ---------------------------------------------------------------------------- discovery checker


def test_discovery_documents_load_and_cache() -> None:
    ml = discovery.load_document("ml")
    assert ml["rootUrl"] == "https://ml.googleapis.com/" and ml["servicePath"] == ""
    assert discovery.load_document("ml") is ml
    assert "GoogleCloudAiplatformV1CustomJob" in discovery.load_document("aiplatform")["schemas"]
    assert discovery.load_document("compute")["servicePath"] == "compute/v1/"  # reservations
    with pytest.raises(ValueError):
        discovery.load_document("storage")
    assert "state" in discovery.output_only_fields("ml", "GoogleCloudMlV1__Job")


def test_validate_body_accepts_guide_like_bodies() -> None:
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", ml_body(), strict_int64=True) == []
    assert discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", vertex_body(), strict_int64=True
    ) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"trainingInput": {"masterConfig": {"foo": 1}}},
         'trainingInput.masterConfig.foo: unknown field "foo"'),
        ({"trainingInput": {"scaleTier": "MEGA"}}, 'trainingInput.scaleTier: invalid value "MEGA"'),
        ({"trainingInput": {"workerCount": 2}},
         "trainingInput.workerCount: int64 must be sent as a JSON string"),
        ({"trainingInput": {"workerCount": "-"}}, "trainingInput.workerCount: invalid int64"),
        ({"trainingInput": {"workerCount": True}}, "trainingInput.workerCount: expected int64"),
        ({"trainingInput": {"scheduling": {"priority": "5"}}},
         "trainingInput.scheduling.priority: expected int32"),
        ({"trainingInput": {"scheduling": {"priority": 2**31}}},
         "trainingInput.scheduling.priority: value 2147483648 out of range for int32"),
        ({"trainingInput": {"scheduling": {"maxWaitTime": "30m"}}}, "trainingInput.scheduling.maxWaitTime"),
        ({"trainingInput": {"args": "--x"}}, "trainingInput.args: expected an array"),
        ({"trainingInput": {"args": [1]}}, "trainingInput.args[0]: expected a string"),
        ({"trainingInput": {"enableWebAccess": "yes"}}, "trainingInput.enableWebAccess: expected a boolean"),
        ({"labels": {"team": 7}}, "labels.team: expected a string"),
        ({"labels": ["team"]}, "labels: expected an object"),
        ({"createTime": "yesterday"}, "createTime: invalid timestamp"),
        ([], "<root>: expected an object"),
    ],
)
def test_validate_body_names_the_path(body: Any, expected: str) -> None:
    problems = discovery.validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True)
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected), problems


def test_validate_body_int64_modes_and_vertex_paths() -> None:
    body = {"trainingInput": {"workerCount": 3, "evaluatorCount": "1"}}
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", body) == []
    assert len(discovery.validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True)) == 1
    vx = vertex_body()
    worker_pools(vx)[1]["replicaCount"] = 2
    worker_pools(vx)[0]["diskSpec"] = {"bootDiskSizeGb": "100"}
    problems = discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", vx, strict_int64=True
    )
    assert sorted(p.split(":")[0] for p in problems) == [
        "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb",
        "jobSpec.workerPoolSpecs[1].replicaCount",
    ]
    assert discovery.validate_body(
        "aiplatform", "GoogleCloudAiplatformV1CustomJob", {"name": "x"}, reject_output_only=True
    ) == ['name: field "name" is output only']
    assert discovery.validate_body("ml", "GoogleCloudMlV1__Job", {"labels": None, "jobId": None}) == []
