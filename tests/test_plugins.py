"""Where the engine would find pulumi-gcp's resource plugin (resources.plugins): the version the installed pulumi_gcp
asks for, its plugin cache under PULUMI_HOME (a download left `.partial` does not count), else PATH; and the words
that say what to install."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

from gcp_training_jobs.resources.plugins import gcp_plugin


def asked_version() -> str:
    spec = find_spec("pulumi_gcp")
    assert spec is not None and spec.submodule_search_locations
    described = Path(list(spec.submodule_search_locations)[0]) / "pulumi-plugin.json"
    return str(json.loads(described.read_text())["version"])


def test_the_plugin_is_looked_for_where_the_engine_looks(tmp_path: Path) -> None:
    home, version = tmp_path / "pulumi-home", asked_version()
    env = {"PULUMI_HOME": str(home), "PATH": str(tmp_path / "bin")}
    missing = gcp_plugin(env)
    assert (missing.name, missing.version, missing.found) == ("gcp", version, None)
    assert missing.install == f"pulumi plugin install resource gcp {version}"
    words = missing.needed("the stack's persistent resources (team-pool)")
    assert words.startswith(f"Pulumi's gcp resource plugin (pulumi-resource-gcp {version}) is not installed")
    assert words.endswith(f"install it first: pulumi plugin install resource gcp {version}")
    folder = home / "plugins" / f"resource-gcp-v{version}"
    folder.mkdir(parents=True)
    (folder / "pulumi-resource-gcp").write_text("")
    Path(f"{folder}.partial").write_text("")
    assert gcp_plugin(env).found is None  # a download that did not finish
    Path(f"{folder}.partial").unlink()
    assert gcp_plugin(env).found == str(folder)
    (folder / "pulumi-resource-gcp").unlink()
    (tmp_path / "bin").mkdir()
    binary = tmp_path / "bin" / "pulumi-resource-gcp"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert gcp_plugin(env).found == str(binary)  # an ambient plugin on PATH
