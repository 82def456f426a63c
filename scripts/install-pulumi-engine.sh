#!/usr/bin/env bash
# install-pulumi-engine.sh: make a working Pulumi CLI (engine + Python language
# host + Python dynamic-provider plugin) available without the official
# installer (get.pulumi.com is not reachable here). The binaries are built from
# source through the Go module proxy and cached outside the repository.
#
# Usage:
#   BIN=$(scripts/install-pulumi-engine.sh | tail -1)
#   export PATH="$BIN:$PATH"
# Progress goes to stderr. The LAST line of stdout is the bin directory, alone.
# Optional check: scripts/smoke-pulumi-engine.sh "$BIN"
#
# Inputs (all optional):
#   PULUMI_VERSION            version to build (default: the `pulumi` Python package
#                             installed in $PULUMI_ENGINE_VENV, e.g. 3.272.0)
#   PULUMI_ENGINE_VENV        venv whose python is read (default: <repo>/venv)
#   PULUMI_ENGINE_CACHE       cache root (default: $HOME/.cache/gcp-training-jobs/pulumi-engine);
#                             binaries go to $PULUMI_ENGINE_CACHE/v<version>/bin
#   PULUMI_ENGINE_IGNORE_PATH=1   do not short-circuit on a `pulumi` already on PATH
#   PULUMI_ENGINE_REBUILD=1       rebuild even if the cache already has this version
#   PULUMI_CLI_VERSION        build the CLI (pkg/v3) at this version instead
#   PULUMI_CLI_FALLBACK_VERSION   CLI version used when the Go proxy refuses
#                             pkg/v3@v<version> (default 3.259.0, see below)
#   PULUMI_LEGACY_LANGHOST_VERSION  sdk/v3 version whose in-module Python language
#                             host is built when the standalone language-host
#                             module is unavailable (default 3.79.0, see below)
#   PULUMI_ENGINE_NODEJS=0    do not build the Node.js language host (see below)
#   PULUMI_NODEJS_HOST_VERSION  sdk/v3 version whose in-module Node.js language host
#                             is built (default 3.68.0, the last one that has it)
#   GO                        go binary (default: go on PATH, else /usr/local/go/bin/go)
#
# Environment a caller needs to run pulumi offline with the Python dynamic provider:
#   export PATH="$BIN:$PATH"
#   export PULUMI_SKIP_UPDATE_CHECK=1                    # no version check against pulumi.com
#   export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=1 # the language host reports pulumi_gcp
#                                                        # (installed in the venv) as a required
#                                                        # plugin; without this the engine tries to
#                                                        # download pulumi-resource-gcp
#   export PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK=1    # Automation API only; belt and braces (the
#                                                        # SDK's minimum CLI is 3.1.0, so a CLI older
#                                                        # than the SDK still passes the check)
#   export PULUMI_PYTHON_CMD=/abs/path/to/venv/bin/python  # REQUIRED with the legacy language host
#                                                        # (see below): it ignores the
#                                                        # `runtime.options.virtualenv` of Pulumi.yaml
#   export PULUMI_BACKEND_URL=file:///some/state/dir     # local state, no pulumi.com login
#   export PULUMI_CONFIG_PASSPHRASE=...                  # passphrase secrets provider
#   export PULUMI_HOME=/some/dir                         # optional: keep ~/.pulumi untouched
# The dynamic provider (pulumi-resource-pulumi-python) gets the venv from the
# engine (PULUMI_RUNTIME_VIRTUALENV, from Pulumi.yaml), or PULUMI_PYTHON_CMD.
#
# Why the versions may differ from the Python package (facts found on this machine):
#  * `go install pkg@version` refuses Pulumi's modules (their go.mod has replace
#    lines), so each binary is built from a throwaway wrapper module that
#    requires the Pulumi modules; the non-local replace lines of the built
#    module's own go.mod are copied into the wrapper.
#  * The Go module proxy reachable here serves github.com/pulumi/pulumi/pkg/v3
#    zips only up to v3.259.0 (pkg/v3@v3.260.0 and newer: 403 "This module
#    version is not available"), while sdk/v3 is served up to the newest release.
#    So if pkg/v3@v<version> cannot be downloaded, the CLI is built at
#    PULUMI_CLI_FALLBACK_VERSION and a warning is printed.
#  * The Python language host has been its own module
#    (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) since
#    about v3.80; that module is not served by the proxy here at any version.
#    Up to sdk/v3@v3.79.0 the same host was a package inside sdk/v3
#    (github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python), which
#    the proxy does serve, so that one is built as a fallback. The newer CLI
#    talks to it through its fallbacks for older hosts (GetRequiredPackages ->
#    GetRequiredPlugins). It does not receive the Pulumi.yaml runtime options
#    (virtualenv/toolchain), hence PULUMI_PYTHON_CMD above.
#  * pulumi-language-python-exec and pulumi-resource-pulumi-python are the
#    scripts shipped in sdk/v3@v<version> (python/cmd, python/dist), i.e. they
#    match the Python SDK. pulumi-analyzer-policy-python is not installed: the
#    engine runs that script only for a policy pack whose runtime has no language
#    host, and `python` has one. Given a Python pack's folder, the engine asks the
#    language host to RunPlugin it; the legacy host above predates
#    RunPluginRequest.info and runs `python ""` in the project folder (the
#    project's own __main__.py, not the pack). So a Python pack is run as an
#    executable instead, which the engine launches directly like a provider:
#    `pulumi preview --policy-pack policies/analyzer` (see policies/analyzer).
#    Nothing more is needed beside the engine; the pack needs pulumi-policy in
#    the venv (pip install --no-deps -r policies/requirements.txt).
#
# Build flags follow Pulumi's .goreleaser.yml: -trimpath, tags osusergo,grpcnotrace,
# ldflags "-w -s -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v<ver>".
# Measured on a 2-core machine: 234 s with an empty Go build cache (modules already
# downloaded), 6-12 s with a warm one, 0.3 s when the cached install is reused.
set -euo pipefail

log() { printf '[install-pulumi-engine] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
VENV=${PULUMI_ENGINE_VENV:-$REPO_DIR/venv}

# ---------------------------------------------------------------- version ---
if [ -n "${PULUMI_VERSION:-}" ]; then
  VERSION=${PULUMI_VERSION#v}
else
  [ -x "$VENV/bin/python" ] || die "no $VENV/bin/python; set PULUMI_VERSION or PULUMI_ENGINE_VENV"
  VERSION=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pulumi"))') \
    || die "could not read the pulumi Python package version from $VENV"
fi
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "unexpected version '$VERSION'"

# ------------------------------------------------------ already on PATH? ---
if [ "${PULUMI_ENGINE_IGNORE_PATH:-}" != 1 ] && command -v pulumi >/dev/null 2>&1; then
  existing=$(command -v pulumi)
  if existing_version=$(PULUMI_SKIP_UPDATE_CHECK=1 timeout 60 "$existing" version 2>/dev/null); then
    log "pulumi already on PATH: $existing ($existing_version)"
    if [ "${existing_version#v}" != "$VERSION" ]; then
      log "note: its version differs from the pulumi Python package ($VERSION)"
    fi
    dirname "$existing"
    exit 0
  fi
  log "pulumi on PATH ($existing) does not work; building our own"
fi

# ---------------------------------------------------------------- cache ---
CACHE_ROOT=${PULUMI_ENGINE_CACHE:-$HOME/.cache/gcp-training-jobs/pulumi-engine}
DEST=$CACHE_ROOT/v$VERSION
BIN=$DEST/bin
BINARIES=(pulumi pulumi-language-python pulumi-language-python-host pulumi-language-python-exec
          pulumi-resource-pulumi-python)

# write_langhost_wrapper BINDIR: `pulumi-language-python` as a script that runs the language host built here
# (pulumi-language-python-host) and ends it, with the program it runs, when the engine that started it is gone.
# The engine starts each plugin in a process group of its own (cmdutil.RegisterProcessGroup), so a SIGKILL of
# the CLI reaches none of them, with a pipe on its standard input that it holds the only writing end of and
# never writes to (plugin.go, cmd.StdinPipe()); the language host asks after its engine only every 5 minutes
# (rpcutil.Healthcheck(ctx, engineAddress, 5*time.Minute, cancel) in its main.go). The wrapper reads that
# pipe (`read`, a builtin: no process more) and, at its end, kills its process group: the host and the
# program it started (a process of the same group). The dynamic provider ends itself the same way
# (gcp_training_jobs/resources/engine_watch.py). A shutdown by the engine (SIGINT to the group) ends the host
# as before. A bin directory built before the wrapper gets it in place, without a rebuild.
write_langhost_wrapper() {
  local dir=$1
  if [ -x "$dir/pulumi-language-python" ] && [ ! -e "$dir/pulumi-language-python-host" ]; then
    mv "$dir/pulumi-language-python" "$dir/pulumi-language-python-host"
  fi
  [ -x "$dir/pulumi-language-python-host" ] || return 0
  cat >"$dir/pulumi-language-python.tmp" <<'WRAPPER'
#!/bin/sh
# pulumi-language-python, written by scripts/install-pulumi-engine.sh: the language host built beside it
# (pulumi-language-python-host), ended with the engine that started it. The engine's pipe on standard input
# reads end-of-file once the engine is gone (a SIGKILL too): then this process group goes, the host and the
# program it runs, at once rather than at the host's next health check of the engine (every 5 minutes).
# The watch is a subshell of its own (a `read` loop: no process more) that holds the pipe; the host (with the runner
# in front of it, when built: scripts/language-hosts/python) replaces this script (the engine's process, signals
# and exit status are theirs, as before).
exec 3<&0
{ while read -r _ <&3; do :; done; kill -KILL 0; } </dev/null >/dev/null 2>&1 &
exec 3<&-
here=$(dirname "$0")
if [ -x "$here/pulumi-language-python-runner" ]; then
  exec "$here/pulumi-language-python-runner" "$here/pulumi-language-python-host" "$@"
fi
exec "$here/pulumi-language-python-host" "$@"
WRAPPER
  chmod 0755 "$dir/pulumi-language-python.tmp"
  mv "$dir/pulumi-language-python.tmp" "$dir/pulumi-language-python"
}

# cache_ok DIR: the install in DIR is complete and its CLI runs and reports the
# version recorded at build time.
cache_ok() {
  local dir=$1 f expected got
  for f in "${BINARIES[@]}"; do [ -x "$dir/bin/$f" ] || return 1; done
  [ -f "$dir/BUILD-INFO" ] || return 1
  expected=$(sed -n 's/^cli_version=//p' "$dir/BUILD-INFO")
  got=$(PULUMI_SKIP_UPDATE_CHECK=1 timeout 60 "$dir/bin/pulumi" version 2>/dev/null) || return 1
  [ "$got" = "v$expected" ]
}

mkdir -p "$CACHE_ROOT"
# One build per version at a time (a second caller waits, then reuses).
exec 9>"$CACHE_ROOT/.v$VERSION.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $CACHE_ROOT/.v$VERSION.lock"
fi

# Leftovers of an interrupted build of this version (we hold its lock).
rm -rf "$CACHE_ROOT/.build-v$VERSION".*

# ------------------------------------------------------ language host shims ---
# Two small Go programs of this repository (scripts/language-hosts/), each built once into a cache folder of its
# own named by its version and the sha256 of its source ($CACHE_ROOT/<name>-<version>-<sha>/bin, outside the
# engine's, so an engine cached before them stays valid and an edit of the source builds anew), and the Node.js
# language host (last below), then linked into BIN. A failed build only warns: what needs it then fails or skips,
# naming it. Each file's header says why:
#  * pulumi-language-yaml (PULUMI_ENGINE_YAML=0 skips it): the YAML language host of github.com/pulumi/pulumi-yaml
#    (which the Go module proxy serves at v1.11.1 and v1.25.0 only), answering the `Link` that `pulumi package add`
#    calls and v1.25.0 predates: so a Pulumi YAML program runs and `pulumi package add` records the package.
#  * pulumi-language-python-runner: in front of the v3.79 Python language host (the wrapper below runs it), it
#    starts a `runtime: python` plugin (PulumiPlugin.yaml: this repository's provider/), which that host cannot.
#  * pulumi-language-nodejs (PULUMI_ENGINE_NODEJS=0 skips it): no source of ours. The proxy refuses the host's own
#    module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3, 403 at every version), but up to
#    sdk/v3@v3.68.0 the same host was a package inside sdk/v3 (nodejs/cmd/pulumi-language-nodejs, gone from v3.69.0),
#    which the proxy serves: that one is built (ensure_module_host), into $CACHE_ROOT/pulumi-language-nodejs-v3.68.0.
#    It runs a JavaScript or TypeScript program with the program's own @pulumi/pulumi from npm (its `run` script; a
#    TypeScript one through the ts-node that @pulumi/pulumi vendors, with the project's `typescript` when installed).
#    The engine hands it none of Pulumi.yaml's runtime options (it takes them as flags, which the v3.259 engine no
#    longer passes), so it runs with its defaults: TypeScript on, no `nodeargs`. It has no `Link` or
#    `GeneratePackage`: `pulumi package add` cannot generate a TypeScript SDK with it (docs/provider-package.md).
YAML_VERSION=${PULUMI_YAML_VERSION:-1.25.0}
YAML_VERSION=${YAML_VERSION#v}
# ensure_shim BIN NAME SOURCE_DIR MODULE@VERSION LDFLAGS
ensure_shim() {
  local bin=$1 name=$2 src=$3 require=$4 ldflags=$5 sum dest go wrap="" started=0 built=0
  sum=$(cat "$src"/*.go | sha256sum | cut -c1-12)
  dest=$CACHE_ROOT/$name-${require##*@}-$sum
  if [ ! -x "$dest/bin/$name" ]; then
    go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
    wrap=$(mktemp -d "$CACHE_ROOT/.build-$name.XXXXXX")
    started=$(date +%s)
    printf 'module %s\n\ngo 1.24\n\nrequire %s %s\n' "$name" "${require%@*}" "${require##*@}" >"$wrap/go.mod"
    cp "$src"/*.go "$wrap/"
    log "building $name ($src, on $require)"
    (cd "$wrap" && export GOFLAGS="-mod=mod -buildvcs=false" GO111MODULE=on && "$go" mod tidy &&
      "$go" build -trimpath -ldflags "-w -s $ldflags" -o "$wrap/stage/bin/$name" .) >&2 || built=$?
  fi
  finish_build "$bin" "$name" "$dest" "$wrap" "$started" "$built" "module=$require
source_sha256=$sum"
}
# finish_build BIN NAME DEST WRAP STARTED STATUS INFO: the end of ensure_shim's and ensure_module_host's build of NAME
# in the folder WRAP ("": nothing was built, DEST held it), begun at STARTED: its status 0, the build's stage (bin/NAME)
# moved into the cache folder DEST with a BUILD-INFO (INFO's lines and the build's time); any other, a warning. Then
# NAME, built now or before, linked into BIN.
finish_build() {
  local bin=$1 name=$2 dest=$3 wrap=$4 started=$5 status=$6 info=$7
  if [ -n "$wrap" ]; then
    if [ "$status" = 0 ]; then
      printf '%s\nbuild_seconds=%s\nbuilt_at=%s\n' "$info" "$(( $(date +%s) - started ))" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$wrap/stage/BUILD-INFO"
      rm -rf "$dest"
      mv "$wrap/stage" "$dest"
      log "$name built in $(( $(date +%s) - started ))s into $dest/bin"
    else
      log "WARNING: $name did not build; see above"
    fi
    rm -rf "$wrap"
  fi
  if [ -x "$dest/bin/$name" ]; then
    ln -sf "$dest/bin/$name" "$bin/$name"
  fi
}
# copy_replaces GOMOD: print the replace directives of a go.mod whose target is
# a module (not a local ../ path), as single-line directives.
copy_replaces() {
  awk '
    /^replace[[:space:]]*\($/ { inblock = 1; next }
    inblock && /^\)/          { inblock = 0; next }
    inblock                   { line = $0 }
    !inblock && /^replace[[:space:]]/ { line = $0; sub(/^replace[[:space:]]+/, "", line) }
    line != "" && line !~ /=>/ { line = "" }
    line != "" {
      split(line, parts, "=>"); target = parts[2]; gsub(/^[[:space:]]+/, "", target)
      if (target !~ /^(\.|\/)/) { gsub(/^[[:space:]]+/, "", line); print "replace " line }
      line = ""
    }' "$1"
}

# ensure_module_host BIN NAME MODULE@VERSION PACKAGE LDFLAGS: a language host that is a package of a published
# module (no source of ours), built once into $CACHE_ROOT/NAME-VERSION/bin from a throwaway module that requires
# MODULE@VERSION and copies its go.mod's replace lines (as the legacy Python host below), with Pulumi's release flags,
# then linked into BIN. A failed build only warns.
ensure_module_host() {
  local bin=$1 name=$2 require=$3 pkg=$4 ldflags=$5 dest go wrap="" started=0 built=0 gomod
  dest=$CACHE_ROOT/$name-${require##*@}
  if [ ! -x "$dest/bin/$name" ]; then
    go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
    wrap=$(mktemp -d "$CACHE_ROOT/.build-$name.XXXXXX")
    started=$(date +%s)
    log "building $name ($pkg, in $require)"
    (cd "$wrap" && export GOFLAGS="-mod=mod -buildvcs=false" GO111MODULE=on &&
      printf 'module %s\n\ngo 1.24\n\nrequire %s %s\n' "$name" "${require%@*}" "${require##*@}" >go.mod &&
      printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >tools.go &&
      gomod=$("$go" mod download -json "$require" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p') &&
      [ -n "$gomod" ] && copy_replaces "$gomod" >>go.mod && "$go" mod tidy &&
      "$go" build -trimpath -tags osusergo,grpcnotrace -ldflags "-w -s $ldflags" -o "$wrap/stage/bin/$name" "$pkg"
    ) >&2 || built=$?
  fi
  finish_build "$bin" "$name" "$dest" "$wrap" "$started" "$built" "module=$require
package=$pkg"
}
NODEJS_HOST_VERSION=${PULUMI_NODEJS_HOST_VERSION:-3.68.0}
NODEJS_HOST_VERSION=${NODEJS_HOST_VERSION#v}
ensure_shims() {
  local bin=$1
  if [ "${PULUMI_ENGINE_YAML:-1}" != 0 ]; then
    ensure_shim "$bin" pulumi-language-yaml "$SCRIPT_DIR/language-hosts/yaml" \
      "github.com/pulumi/pulumi-yaml@v$YAML_VERSION" "-X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$YAML_VERSION"
  fi
  ensure_shim "$bin" pulumi-language-python-runner "$SCRIPT_DIR/language-hosts/python" \
    "github.com/pulumi/pulumi/sdk/v3@v$VERSION" ""
  if [ "${PULUMI_ENGINE_NODEJS:-1}" != 0 ]; then
    ensure_module_host "$bin" pulumi-language-nodejs "github.com/pulumi/pulumi/sdk/v3@v$NODEJS_HOST_VERSION" \
      github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs \
      "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$NODEJS_HOST_VERSION"
  fi
}

[ -d "$BIN" ] && write_langhost_wrapper "$BIN"  # (a bin directory built before the wrapper)
if [ "${PULUMI_ENGINE_REBUILD:-}" != 1 ] && cache_ok "$DEST"; then
  log "reusing $BIN ($(PULUMI_SKIP_UPDATE_CHECK=1 "$BIN/pulumi" version))"
  ensure_shims "$BIN"
  echo "$BIN"
  exit 0
fi

# ------------------------------------------------------------------- go ---
if [ -z "${GO:-}" ]; then
  if command -v go >/dev/null 2>&1; then GO=$(command -v go)
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
  else die "no Go toolchain (go on PATH or /usr/local/go/bin/go) to build Pulumi with"
  fi
fi
export GOFLAGS="-mod=mod -buildvcs=false" GO111MODULE=on
# GOCACHE / GOMODCACHE: Go's defaults (persistent, shared across runs).
log "using $("$GO" version) (GOCACHE=$("$GO" env GOCACHE))"

WORK=$(mktemp -d "$CACHE_ROOT/.build-v$VERSION.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
STAGE=$WORK/stage            # becomes $DEST with one rename
mkdir -p "$STAGE/bin"

# mod_dir MODULE@VERSION: download a module, print its directory (empty on failure).
mod_dir() {
  local json
  json=$(cd "$WORK" && "$GO" mod download -json "$1" 2>/dev/null) || true
  printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}
# mod_error MODULE@VERSION: the proxy's error for a module (for messages).
mod_error() {
  (cd "$WORK" && "$GO" mod download -json "$1" 2>&1) |
    sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p' | head -1
}

# write_wrapper DIR GOVERSION REQUIRE_LINES REPLACE_SOURCE_GOMOD PACKAGES...
write_wrapper() {
  local dir=$1 gover=$2 requires=$3 replace_src=$4
  shift 4
  mkdir -p "$dir"
  {
    echo "module pulumi-engine-build"
    echo
    echo "go $gover"
    echo
    echo "require ("
    printf '%s\n' "$requires"
    echo ")"
    echo
    copy_replaces "$replace_src"
  } >"$dir/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    local p
    for p in "$@"; do echo "	_ \"$p\""; done
    echo ")"
  } >"$dir/tools.go"
}

# go_build DIR VERSION OUT PACKAGE: release-style build (see .goreleaser.yml).
go_build() {
  local dir=$1 ver=$2 out=$3 pkg=$4
  log "go build $pkg (stamped v$ver) -> $(basename "$out")"
  (cd "$dir" && "$GO" build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-w -s -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$ver" \
    -o "$out" "$pkg") >&2
}

gomod_go_version() { sed -n 's/^go \([0-9.]*\).*/\1/p' "$1" | head -1; }

START=$(date +%s)

# ------------------------------------------------------------------ CLI ---
CLI_VERSION=${PULUMI_CLI_VERSION:-$VERSION}
CLI_VERSION=${CLI_VERSION#v}
log "downloading github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION"
PKG_DIR=$(mod_dir "github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION")
if [ -z "$PKG_DIR" ]; then
  log "WARNING: the Go proxy does not serve pkg/v3@v$CLI_VERSION: $(mod_error "github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION")"
  CLI_VERSION=${PULUMI_CLI_FALLBACK_VERSION:-3.259.0}
  CLI_VERSION=${CLI_VERSION#v}
  log "WARNING: building the CLI at v$CLI_VERSION instead (Python SDK stays $VERSION)"
  PKG_DIR=$(mod_dir "github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION")
  [ -n "$PKG_DIR" ] || die "cannot download pkg/v3@v$CLI_VERSION either: $(mod_error "github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION")"
fi

# The standalone Python language host module, at the Python package's version,
# needs pkg/v3 and sdk/v3 at that same version, so it can only join the CLI
# wrapper when the CLI is built at that version too.
LANG_MOD=github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3
LANG_DIR=
if [ "$CLI_VERSION" = "$VERSION" ]; then
  LANG_DIR=$(mod_dir "$LANG_MOD@v$VERSION")
fi

CLI_WRAP=$WORK/cli
cli_requires="	github.com/pulumi/pulumi/pkg/v3 v$CLI_VERSION
	github.com/pulumi/pulumi/sdk/v3 v$CLI_VERSION"
cli_pkgs=(github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
if [ -n "$LANG_DIR" ]; then
  cli_requires+="
	$LANG_MOD v$VERSION"
  cli_pkgs+=("$LANG_MOD")
fi
write_wrapper "$CLI_WRAP" "$(gomod_go_version "$PKG_DIR/go.mod")" "$cli_requires" "$PKG_DIR/go.mod" "${cli_pkgs[@]}"
log "resolving CLI dependencies (go mod tidy in $CLI_WRAP)"
(cd "$CLI_WRAP" && "$GO" mod tidy) >&2 || die "go mod tidy failed for the CLI wrapper"
go_build "$CLI_WRAP" "$CLI_VERSION" "$STAGE/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
  || die "building the pulumi CLI failed"

# -------------------------------------------------------- language host ---
if [ -n "$LANG_DIR" ]; then
  LANGHOST="$LANG_MOD@v$VERSION"
  go_build "$CLI_WRAP" "$VERSION" "$STAGE/bin/pulumi-language-python" "$LANG_MOD" \
    || die "building the Python language host failed"
else
  LEGACY_VERSION=${PULUMI_LEGACY_LANGHOST_VERSION:-3.79.0}
  LEGACY_VERSION=${LEGACY_VERSION#v}
  if [ "$CLI_VERSION" = "$VERSION" ]; then
    log "WARNING: the Go proxy does not serve $LANG_MOD@v$VERSION;"
  else
    log "WARNING: $LANG_MOD@v$VERSION needs pkg/v3@v$VERSION, which is unavailable;"
  fi
  log "WARNING: building the legacy in-sdk Python language host from sdk/v3@v$LEGACY_VERSION"
  log "WARNING: (set PULUMI_PYTHON_CMD=<venv>/bin/python: it ignores runtime.options.virtualenv)"
  LEGACY_DIR=$(mod_dir "github.com/pulumi/pulumi/sdk/v3@v$LEGACY_VERSION")
  [ -n "$LEGACY_DIR" ] || die "cannot download sdk/v3@v$LEGACY_VERSION: $(mod_error "github.com/pulumi/pulumi/sdk/v3@v$LEGACY_VERSION")"
  [ -f "$LEGACY_DIR/python/cmd/pulumi-language-python/main.go" ] \
    || die "sdk/v3@v$LEGACY_VERSION has no python/cmd/pulumi-language-python (it moved out after v3.79)"
  LANG_WRAP=$WORK/langhost
  legacy_pkg=github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python
  write_wrapper "$LANG_WRAP" "$(gomod_go_version "$LEGACY_DIR/go.mod")" \
    "	github.com/pulumi/pulumi/sdk/v3 v$LEGACY_VERSION" "$LEGACY_DIR/go.mod" "$legacy_pkg"
  log "resolving language host dependencies (go mod tidy in $LANG_WRAP)"
  (cd "$LANG_WRAP" && "$GO" mod tidy) >&2 || die "go mod tidy failed for the language host wrapper"
  go_build "$LANG_WRAP" "$LEGACY_VERSION" "$STAGE/bin/pulumi-language-python" "$legacy_pkg" \
    || die "building the legacy Python language host failed"
  LANGHOST="github.com/pulumi/pulumi/sdk/v3@v$LEGACY_VERSION ($legacy_pkg)"
fi

# ------------------------------------------------------- python scripts ---
SCRIPTS_VERSION=$VERSION
SDK_DIR=$(mod_dir "github.com/pulumi/pulumi/sdk/v3@v$SCRIPTS_VERSION")
if [ -z "$SDK_DIR" ]; then
  log "WARNING: sdk/v3@v$SCRIPTS_VERSION unavailable; taking the Python scripts from sdk/v3@v$CLI_VERSION"
  SCRIPTS_VERSION=$CLI_VERSION
  SDK_DIR=$(mod_dir "github.com/pulumi/pulumi/sdk/v3@v$SCRIPTS_VERSION")
  [ -n "$SDK_DIR" ] || die "cannot download sdk/v3@v$SCRIPTS_VERSION"
fi
for rel in python/cmd/pulumi-language-python-exec python/dist/pulumi-resource-pulumi-python; do
  [ -f "$SDK_DIR/$rel" ] || die "sdk/v3@v$SCRIPTS_VERSION has no $rel"
  cp "$SDK_DIR/$rel" "$STAGE/bin/"
done
chmod 0755 "$STAGE/bin/"*
write_langhost_wrapper "$STAGE/bin"

ELAPSED=$(( $(date +%s) - START ))

# ------------------------------------------------------------- verify ---
got=$(PULUMI_SKIP_UPDATE_CHECK=1 timeout 60 "$STAGE/bin/pulumi" version) || die "the built pulumi does not run"
[ "$got" = "v$CLI_VERSION" ] || die "built pulumi reports '$got', expected v$CLI_VERSION"
log "built pulumi $got"

cat >"$STAGE/BUILD-INFO" <<EOF
requested_version=$VERSION
cli_version=$CLI_VERSION
cli_module=github.com/pulumi/pulumi/pkg/v3@v$CLI_VERSION
language_host=$LANGHOST
python_scripts=github.com/pulumi/pulumi/sdk/v3@v$SCRIPTS_VERSION
go=$("$GO" env GOVERSION)
build_seconds=$ELAPSED
built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
EOF

# ------------------------------------------------- atomic move into place ---
if [ -e "$DEST" ]; then
  mv "$DEST" "$WORK/previous"   # stale or incomplete; removed with $WORK
fi
mv "$STAGE" "$DEST"
log "build took ${ELAPSED}s; installed into $BIN"
if [ "$CLI_VERSION" != "$VERSION" ]; then
  log "note: CLI is v$CLI_VERSION, the pulumi Python package is $VERSION"
fi
ensure_shims "$BIN"
echo "$BIN"
