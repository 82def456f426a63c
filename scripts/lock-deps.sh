#!/usr/bin/env bash
# lock-deps.sh: make the lock files from the ranges. Each lock pins every package, transitive ones included,
# with `==` and the sha256 of every artifact PyPI has for that release, for Python 3.11 on any platform:
#   requirements-dev.txt      pyproject.toml [project.dependencies] + [project.optional-dependencies] dev
#   requirements.txt          pyproject.toml [project.dependencies], at the same pins as requirements-dev.txt
#   policies/requirements.txt policies/requirements.in (installed with --no-deps: that file says why)
#
# Usage:
#   scripts/lock-deps.sh                  keep every pin the ranges still allow (after a range changed)
#   scripts/lock-deps.sh --upgrade        the newest release each range allows (what `pip install .` gets)
#   scripts/lock-deps.sh ... --out DIR    write the three locks under DIR instead of the repository
# The resolver is uv, at the version scripts/lock-tools.txt pins (installed, with its hash, into a throwaway
# venv when `uv` on PATH is another version). Nothing but PyPI is read; no local path enters a lock.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

upgrade=()
out=$root
while [ $# -gt 0 ]; do
  case $1 in
    --upgrade) upgrade=(--upgrade); shift ;;
    --out) out=$(cd "$2" && pwd); shift 2 ;;
    *) echo "lock-deps.sh: unknown argument $1 (allowed: --upgrade, --out DIR)" >&2; exit 2 ;;
  esac
done

want=$(sed -n 's/^uv==\([^ ]*\).*/\1/p' scripts/lock-tools.txt)
uv=$(command -v uv || true)
if [ -z "$uv" ] || [ "$("$uv" --version | cut -d' ' -f2)" != "$want" ]; then
  tools=$(mktemp -d)
  trap 'rm -rf "$tools"' EXIT
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --require-hashes -r scripts/lock-tools.txt
  uv=$tools/venv/bin/uv
fi

mkdir -p "$out/policies"
# Existing pins are kept (uv prefers the versions in the output file) unless --upgrade: seed a new --out folder.
for lock in requirements-dev.txt requirements.txt policies/requirements.txt; do
  if [ "$out" != "$root" ] && [ ! -e "$out/$lock" ] && [ ${#upgrade[@]} -eq 0 ]; then cp "$lock" "$out/$lock"; fi
done

common=(--universal --python-version 3.11 --generate-hashes --quiet --index-url https://pypi.org/simple
        --custom-compile-command "scripts/lock-deps.sh" "${upgrade[@]}")
# PIP_FIND_LINKS and other pip settings of a machine never reach uv; UV_* ones would, so they are cleared.
unset UV_FIND_LINKS UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX UV_CONSTRAINT UV_OVERRIDE
"$uv" pip compile "${common[@]}" pyproject.toml --extra dev -o "$out/requirements-dev.txt"
"$uv" pip compile "${common[@]}" pyproject.toml -c "$out/requirements-dev.txt" -o "$out/requirements.txt"
"$uv" pip compile "${common[@]}" --no-deps policies/requirements.in -o "$out/policies/requirements.txt"
echo "lock-deps.sh: wrote $out/requirements-dev.txt, $out/requirements.txt, $out/policies/requirements.txt" >&2
