#!/usr/bin/env bash
# The provider, lifecycle and emulator tests, RUNS (3) times in a row while BURNERS (4) CPU-burning processes
# run beside them: the tests must hold on a busy machine (no test times anything; clocks and sleeps are
# injected). Exits non-zero if any run fails, or if a burner stopped before the last run ended.
#
#   scripts/test-under-load.sh [extra pytest arguments]
#
# Each burner is bounded: it stops by itself after BURN_SECONDS (1800), and all are killed when this script
# exits, however it exits.
set -euo pipefail
cd "$(dirname "$0")/.."

BURNERS=${BURNERS:-4}
RUNS=${RUNS:-3}
BURN_SECONDS=${BURN_SECONDS:-1800}
PYTEST=${PYTEST:-venv/bin/pytest}

TESTS=(
  tests/test_training_job.py        # the provider: check, diff, create, read, update, delete, waits
  tests/test_crash_recovery.py      # the lifecycle: adoption, reconciliation of an unknown create
  tests/test_job_protection.py      # the provider's protection of running jobs
  tests/test_one_pass.py            # check + create read, judge and render a job once
  tests/test_upgrade_labels.py      # the provider's identity labels, pinned
  tests/test_tuning_emulator.py     # the lifecycle through the tuning backend, the emulator's tuning jobs
  tests/test_emulator.py            # the emulator, driven by Google's clients
  tests/test_vertex_emulator.py
  tests/test_emulator_sdk.py
  tests/test_emulator_sdk_aiplatform.py
  tests/test_emulator_offline.py
  tests/test_job_watch.py           # a waiting up's reports and costUsd, on the provider's injected clocks
  tests/frozen_clock/test_job_logs.py            # reading and following a job's log (sleeps move the emulator's clock)
  tests/frozen_clock/test_stack_commands.py      # status, logs, spend against the emulator
  tests/frozen_clock/test_logging_emulator.py    # the emulator's Cloud Logging surface
  tests/test_fallbacks.py           # fallbacks, retries, rerun and the quota check through the provider
  tests/test_quotas.py              # quota reading (Cloud Quotas, else Service Usage) and review against the emulator
)

main() {
  burners=()
  tests_pid=""
  stop_all() {  # the test run in progress (when interrupted) and every burner
    local pid
    for pid in $tests_pid "${burners[@]}"; do
      kill "$pid" 2>/dev/null || true
    done
    for pid in $tests_pid "${burners[@]}"; do
      wait "$pid" 2>/dev/null || true
    done
  }
  trap stop_all EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  for _ in $(seq "$BURNERS"); do
    timeout "$BURN_SECONDS" sh -c 'while :; do :; done' &
    burners+=("$!")
  done
  echo "test-under-load: $BURNERS CPU burners (pids ${burners[*]}, each stops after ${BURN_SECONDS}s at most)"

  passed=0
  for run in $(seq "$RUNS"); do
    echo "== run $run of $RUNS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    # In the background and waited for, so that a signal to this script is handled at once, not after the run.
    "$PYTEST" -q "${TESTS[@]}" "$@" &
    tests_pid=$!
    if wait "$tests_pid"; then
      passed=$((passed + 1))
    else
      echo "== run $run of $RUNS FAILED"
    fi
    tests_pid=""
  done

  for pid in "${burners[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "test-under-load: burner $pid stopped before the last run ended (raise BURN_SECONDS): not a loaded run" >&2
      exit 1
    fi
  done
  echo "test-under-load: $passed of $RUNS runs passed beside $BURNERS CPU burners (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  [ "$passed" -eq "$RUNS" ]
}

# One line, after the whole file is read: an edit to this file while it runs changes nothing.
main "$@"; exit
