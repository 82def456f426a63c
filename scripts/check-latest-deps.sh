#!/usr/bin/env bash
# check-latest-deps.sh: what a library user gets from `pip install` today. Resolves the newest release every
# range in pyproject.toml (and policies/requirements.in) admits into fresh locks, installs them into a
# throwaway venv with --require-hashes, then runs ruff, mypy and the unit tests (not e2e: they need the engine).
#
# Usage: scripts/check-latest-deps.sh [--write]
#   --write   copy the new locks into the repository as well (the scheduled workflow opens a pull request)
# Exit status: the tests' (0 when the newest releases pass).
set -euo pipefail
cd "$(dirname "$0")/.."
write=0
case ${1:-} in
  --write) write=1 ;;
  "") ;;
  *) echo "check-latest-deps.sh: unknown argument $1 (allowed: --write)" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/lock-deps.sh --upgrade --out "$work"
for lock in requirements.txt requirements-dev.txt policies/requirements.txt; do
  if ! diff -q "$lock" "$work/$lock" >/dev/null; then
    echo "check-latest-deps.sh: $lock moves:" >&2
    diff <(grep -E '^[A-Za-z0-9]' "$lock") <(grep -E '^[A-Za-z0-9]' "$work/$lock") | grep -E '^[<>]' >&2 || true
  fi
done
if [ "$write" = 1 ]; then
  for lock in requirements.txt requirements-dev.txt policies/requirements.txt; do cp "$work/$lock" "$lock"; done
fi

python3 -m venv "$work/venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$work/venv/bin/pip" install --quiet --require-hashes -r "$work/requirements-dev.txt"
"$work/venv/bin/pip" check
"$work/venv/bin/pip" install --quiet --no-deps --require-hashes -r "$work/policies/requirements.txt"
"$work/venv/bin/ruff" check .
"$work/venv/bin/mypy" gcp_training_jobs components policies benchmarks
"$work/venv/bin/pytest" -q -m "not e2e" -p no:cacheprovider
