"""The Pulumi resource plugin a stack's pulumi-gcp resources need (its persistent resources: `vertex.
AiPersistentResource`; its budget: `billing.Budget`, the billingbudgets API and, with `enforce`, the Pub/Sub topic
and the stop function with its account, role, grant and source), and whether it is where the engine looks for it.
Light: it imports neither Pulumi nor pulumi_gcp, so `plan` and the program can both ask it. pulumi_gcp (the Python
package) carries the plugin's name and version in its `pulumi-plugin.json`; the engine runs `pulumi-resource-gcp`
from its plugin cache (`$PULUMI_HOME/plugins/resource-gcp-vVERSION/`, `~/.pulumi` when PULUMI_HOME is unset; a
folder beside a `.partial` file is a download that did not finish) or, as an ambient plugin, from PATH. When it
finds none it downloads it where it can; offline (or with PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION) `pulumi up`
fails with `no resource plugin 'pulumi-resource-gcp' found`. The project says first what to install."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gcp_training_jobs.resources.settings import StackSettings

#: The pulumi-gcp package's import name, whose resource plugin the stack's gcp resources need.
GCP_PACKAGE = "pulumi_gcp"


@dataclass(frozen=True)
class Plugin:
    """A resource plugin a stack needs: its name, the version its Python package asks for, and where the engine would
    find it (None: nowhere it looks)."""

    name: str
    version: str | None
    found: str | None

    @property
    def binary(self) -> str:
        return f"pulumi-resource-{self.name}"

    @property
    def install(self) -> str:
        """The command that installs it: `pulumi plugin install resource gcp 10.2.0`."""
        return f"pulumi plugin install resource {self.name} {self.version or 'VERSION'}".rstrip()

    def needed(self, why: str) -> str:
        """The project's words for a plugin the stack needs and the engine will not find: why it is needed, what to
        install."""
        version = f" {self.version}" if self.version else ""
        return (f"Pulumi's {self.name} resource plugin ({self.binary}{version}) is not installed, and {why} need it: "
                f"`pulumi up` fails with \"no resource plugin '{self.binary}' found\" where the engine cannot "
                f"download it; install it first: {self.install}")


def _package_plugin(package: str) -> tuple[str, str | None]:
    """(plugin name, version) from the package's pulumi-plugin.json, without importing the package."""
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        described = Path(folder) / "pulumi-plugin.json"
        if described.is_file():
            data = json.loads(described.read_text(encoding="utf-8"))
            return str(data.get("name") or "gcp"), (str(data["version"]) if data.get("version") else None)
    return "gcp", None


def _cached(name: str, version: str | None, environ: Mapping[str, str]) -> str | None:
    home = Path(environ.get("PULUMI_HOME") or Path(environ.get("HOME") or Path.home()) / ".pulumi")
    plugins = home / "plugins"
    if not plugins.is_dir():
        return None
    wanted = [plugins / f"resource-{name}-v{version}"] if version else sorted(plugins.glob(f"resource-{name}-v*"))
    for folder in wanted:
        if (folder / f"pulumi-resource-{name}").is_file() and not Path(f"{folder}.partial").exists():
            return str(folder)
    return None


def gcp_plugin(environ: Mapping[str, str] | None = None) -> Plugin:
    """pulumi-gcp's resource plugin: the version the installed pulumi_gcp asks for, and where the engine would find
    it (its plugin cache, then PATH)."""
    env = os.environ if environ is None else environ
    name, version = _package_plugin(GCP_PACKAGE)
    found = _cached(name, version, env) or shutil.which(f"pulumi-resource-{name}", path=env.get("PATH"))
    return Plugin(name, version, found)


def gcp_resources_of(settings: StackSettings) -> str | None:
    """What of a stack registers resources pulumi-gcp's plugin runs, in words for `Plugin.needed` (every one, the one
    answer the program's warning and `plan`'s review give); None when it registers none of them."""
    found = []
    if settings.resources:
        found.append(f"the stack's persistent resources ({', '.join(sorted(settings.resources))})")
    if settings.budget is not None:
        enforced = " and, with enforce, its Pub/Sub topic and its stop function (a Cloud Run function, its service " \
            "account, role, grant and source)" if settings.budget.enforce else ""
        found.append(f"the stack's budget (gcp-training-jobs:budget: its billing Budget and the billingbudgets "
                     f"API{enforced})")
    return " and ".join(found) or None
