#!/usr/bin/env bash
# smoke-pulumi-engine.sh: check that a Pulumi engine (see install-pulumi-engine.sh)
# runs a Python program with a pulumi.dynamic.Resource fully offline, using a
# local file:// backend in a temporary directory.
#
# Usage:
#   scripts/smoke-pulumi-engine.sh [BIN_DIR]
# BIN_DIR defaults to the last stdout line of scripts/install-pulumi-engine.sh.
# Optional env: PULUMI_ENGINE_VENV (default <repo>/venv: the venv with the
# `pulumi` Python package), PULUMI_SMOKE_KEEP=1 to keep the temp dir.
# Exit 0 when `pulumi stack init`, `up`, a no-change `preview` and `destroy` all
# work and the dynamic resource was created and deleted. Progress on stderr;
# the last stdout line is "smoke test passed".
set -euo pipefail

log() { printf '[smoke-pulumi-engine] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
VENV=$(cd "${PULUMI_ENGINE_VENV:-$REPO_DIR/venv}" && pwd)

BIN=${1:-}
if [ -z "$BIN" ]; then
  BIN=$("$SCRIPT_DIR/install-pulumi-engine.sh" | tail -1)
fi
BIN=$(cd "$BIN" && pwd)
[ -x "$BIN/pulumi" ] || die "no pulumi in $BIN"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pulumi-smoke.XXXXXX")
if [ "${PULUMI_SMOKE_KEEP:-}" != 1 ]; then
  trap 'rm -rf "$TMP"' EXIT
else
  log "keeping $TMP"
fi
mkdir -p "$TMP/project" "$TMP/state" "$TMP/home"

# The environment needed to run pulumi offline with the Python dynamic provider.
export PATH="$BIN:$PATH"
export PULUMI_HOME="$TMP/home"
export PULUMI_BACKEND_URL="file://$TMP/state"
export PULUMI_CONFIG_PASSPHRASE=x
export PULUMI_SKIP_UPDATE_CHECK=1
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=1
export PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK=1
export PULUMI_PYTHON_CMD="$VENV/bin/python"

cd "$TMP/project"
cat >Pulumi.yaml <<EOF
name: engine-smoke
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: $VENV
EOF

# The provider lives in its own module: the dynamic provider plugin must be
# able to unpickle it (by reference to this module) in a separate process.
cat >smoke_provider.py <<'EOF'
import os

from pulumi.dynamic import CreateResult, ResourceProvider

MARKER_DIR = os.environ["SMOKE_MARKER_DIR"]


class MarkerProvider(ResourceProvider):
    """Creates/deletes a marker file so the test can see the provider really ran."""

    def create(self, props):
        path = os.path.join(MARKER_DIR, props["name"])
        with open(path, "w") as f:
            f.write(props["content"])
        return CreateResult(id_=props["name"], outs={**props, "path": path})

    def delete(self, id, props):
        os.remove(os.path.join(MARKER_DIR, id))
EOF

cat >__main__.py <<'EOF'
import pulumi
from pulumi.dynamic import Resource

from smoke_provider import MarkerProvider


class Marker(Resource):
    path: pulumi.Output[str]

    def __init__(self, name, content, opts=None):
        super().__init__(
            MarkerProvider(), name, {"name": name, "content": content, "path": None}, opts
        )


m = Marker("marker-1", "hello from the dynamic provider")
pulumi.export("marker_id", m.id)
pulumi.export("marker_path", m.path)
EOF

mkdir -p "$TMP/markers"
export SMOKE_MARKER_DIR="$TMP/markers"

run() {
  log "\$ pulumi $*"
  pulumi "$@" >&2 || die "pulumi $*"
}

log "pulumi: $(command -v pulumi) ($(pulumi version))"
run stack init dev --non-interactive
run up --yes --skip-preview --non-interactive
[ -f "$TMP/markers/marker-1" ] || die "dynamic provider did not create the marker file"
outputs=$(pulumi stack output --json)
log "stack outputs: $(printf '%s' "$outputs" | tr -d '\n ')"
printf '%s' "$outputs" | grep -q '"marker_id": "marker-1"' || die "unexpected stack outputs"
run preview --non-interactive --expect-no-changes
run destroy --yes --non-interactive
[ ! -e "$TMP/markers/marker-1" ] || die "dynamic provider did not delete the marker file"
count=$(pulumi stack export | grep -c '"urn"' || true)
[ "$count" = 0 ] || die "stack still has $count resources after destroy"
run stack rm dev --yes --non-interactive
echo "smoke test passed"
