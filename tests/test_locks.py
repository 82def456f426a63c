"""The lock files are what every install reads: each pins every package with `==` and its hashes, inside the
ranges pyproject.toml gives library users, and every command that installs reads them with --require-hashes."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
RUNTIME, DEV, POLICY = (ROOT / "requirements.txt", ROOT / "requirements-dev.txt",
                        ROOT / "policies" / "requirements.txt")
#: What a lock's environment is: Python 3.11 on Linux (CI and the runners); the locks are universal, so a line
#: with a marker for another platform is pinned and hashed like the rest.
ENVIRONMENT = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
               "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
               "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}


def entries(lock: Path) -> list[tuple[Requirement, list[str]]]:
    """Each requirement of a lock with its hashes; a line that is neither is refused."""
    text = lock.read_text().replace("\\\n", " ")
    found = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        assert not line.startswith("-"), f"{lock.name}: an option in a lock ({line!r}): only pins belong there"
        spec, *hashes = re.split(r"\s+--hash=", line)
        found.append((Requirement(spec), hashes))
    return found


def pins(lock: Path) -> dict[str, Version]:
    return {canonicalize_name(req.name): Version(next(iter(req.specifier)).version) for req, _ in entries(lock)}


def ranges() -> tuple[list[Requirement], list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return ([Requirement(r) for r in project["dependencies"]],
            [Requirement(r) for r in project["optional-dependencies"]["dev"]])


@pytest.mark.parametrize("lock", [RUNTIME, DEV, POLICY], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_is_pinned_with_its_hashes(lock: Path) -> None:
    found = entries(lock)
    assert found, f"{lock} pins nothing"
    for req, hashes in found:
        (spec,) = req.specifier
        assert spec.operator == "==" and "*" not in spec.version, f"{lock.name}: {req} is not pinned with =="
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), f"{lock.name}: {req}"
    assert "/" not in "".join(str(req) for req, _ in found), f"{lock.name}: a path or URL in a lock"


def test_the_locks_fall_inside_pyprojects_ranges_and_agree() -> None:
    runtime, dev = ranges()
    locked, locked_dev = pins(RUNTIME), pins(DEV)
    for req in runtime:
        name = canonicalize_name(req.name)
        assert name in locked and req.specifier.contains(locked[name]), f"requirements.txt: {name} outside {req}"
    for req in runtime + dev:
        name = canonicalize_name(req.name)
        assert name in locked_dev, f"requirements-dev.txt does not lock {name}"
        assert req.specifier.contains(locked_dev[name]), f"requirements-dev.txt: {name} {locked_dev[name]} not in {req}"
    # What the tests ran on is what users of requirements.txt get.
    differ = {name: (v, locked_dev.get(name)) for name, v in locked.items() if locked_dev.get(name) != v}
    assert not differ, f"requirements.txt and requirements-dev.txt pin these differently: {differ}"


def test_the_policy_packs_pin_falls_inside_its_range() -> None:
    wanted = [Requirement(line) for line in (ROOT / "policies" / "requirements.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    locked = pins(POLICY)
    assert {canonicalize_name(r.name) for r in wanted} == set(locked), "the policy lock pins only pulumi-policy"
    for req in wanted:
        assert req.specifier.contains(locked[canonicalize_name(req.name)]), f"policies/requirements.txt: {req}"


def test_the_sdk_is_pinned_at_the_engine_ci_builds() -> None:
    script = (ROOT / "scripts" / "install-pulumi-engine.sh").read_text()
    engine = re.search(r"PULUMI_CLI_FALLBACK_VERSION:-([0-9.]+)\}", script)
    assert engine, "install-pulumi-engine.sh names no default engine version"
    assert pins(DEV)["pulumi"] == Version(engine.group(1)), "move the pulumi pin and the engine's version together"


def test_every_install_reads_the_locks_with_their_hashes() -> None:
    """The README's and the documentation's commands, .ci/run and the workflows: every `pip install -r` of a lock says
    --require-hashes (pip then also refuses a requirement the lock does not pin)."""
    # The template's requirements are hash-locked too (scripts/template_requirements.py): its workflows and
    # docs/template.md install them with --require-hashes.
    docs = sorted((ROOT / "docs").rglob("*.md"))
    template = ROOT / "templates" / "gcp-training-jobs" / ".github" / "workflows"
    places = [ROOT / "README.md", *docs, ROOT / ".ci" / "run", *sorted((ROOT / ".github" / "workflows").glob("*.yml")),
              *sorted(template.glob("*.yml"))]
    installs = 0
    for place in places:
        for line in place.read_text().replace("\\\n", " ").splitlines():
            for install in re.findall(r"pip install [^&;|]*?-r \S+", line):
                installs += 1
                assert "--require-hashes" in install, f"{place.relative_to(ROOT)}: {install}"
    assert installs >= 6, f"only {installs} installs from a lock found"


def test_the_typescript_fixtures_npm_lock_pins_every_package_with_its_integrity_hash() -> None:
    """tests/fixtures/typescript-job (installed by `npm ci` in tests/test_e2e_typescript.py): package.json names exact
    versions, the lock (lockfileVersion 3) holds them and gives every package a sha512 integrity hash, which `npm ci`
    checks."""
    fixture = ROOT / "tests" / "fixtures" / "typescript-job"
    declared = json.loads((fixture / "package.json").read_text())
    lock = json.loads((fixture / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3
    wanted = {**declared.get("dependencies", {}), **declared.get("devDependencies", {})}
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in wanted.values()), wanted
    packages = {path: entry for path, entry in lock["packages"].items() if path}
    assert {name: packages[f"node_modules/{name}"]["version"] for name in wanted} == wanted
    assert lock["packages"][""]["dependencies"] == declared["dependencies"]
    for path, entry in packages.items():
        assert not entry.get("link"), f"{path}: a link, not a package of the registry"
        assert str(entry.get("integrity", "")).startswith("sha512-"), f"{path}: no sha512 integrity hash"
