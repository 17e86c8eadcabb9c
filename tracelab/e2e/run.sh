#!/usr/bin/env bash
# run.sh LOG GO-TEST-ARGS...: go test -v of the end-to-end tests, its output
# shown and kept in LOG. On failure, the lines that say why are repeated at
# the end: a CI log is read from its tail, and a verbose run's tail is the
# last subtests' logs, not the failure an earlier one met.
set -uo pipefail
log=$1
shift
mkdir -p "$(dirname "$log")"
go test -v "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" != 0 ]; then
  printf '\n==> what failed (all of it in %s):\n' "$log"
  # tracelab's own one-line errors, the scenario checks the tests report,
  # a command's exit, and the failed tests.
  grep -E '^tracelab: |check failed: |verdict "|: exit status [0-9]+$|^\s*--- FAIL|^FAIL|^panic: ' "$log" | tail -n 30
fi
exit "$rc"
