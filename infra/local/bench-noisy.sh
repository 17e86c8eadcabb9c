#!/usr/bin/env bash
# The noisy-neighbour check: every scenario's smoke profile, RUNS times
# each, beside a CPU hog on every CPU at normal priority (stress-ng, the
# Debian package), as a shared CI runner would be. It prints each run's
# verdict and the failed checks, then the pass rate per scenario; the
# scenario READMEs record them. The stack binds the lab's ports, so nothing
# else of the lab may run. TEST=<name> runs that end-to-end test
# (tracelab/e2e, e.g. TestChattyDBSmoke) in place of the plain scenario
# runs, so its own checks are judged beside the hog too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runs=${RUNS:-3}
hogs=${HOGS:-$(getconf _NPROCESSORS_ONLN)}
scenarios=${SCENARIOS:-$(cd "$root/scenarios" && ls -d */ | tr -d / | tr '\n' ' ')}
tracelab=${TRACELAB_BIN:-$root/.state/bin/tracelab}
test=${TEST:-}
[ -z "$test" ] || scenarios=$test

# one NAME: a smoke run of scenario NAME, or the end-to-end test NAME.
one() {
  if [ -n "$test" ]; then
    (cd "$root/tracelab" && TRACELAB_BIN=$tracelab go test -tags e2e -count=1 -v -timeout 30m -run "^$1\$" ./e2e)
  else
    "$tracelab" scenario run "$1" --profile smoke
  fi
}

if ! command -v stress-ng >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing stress-ng (apt-get)" >&2
    apt-get install -y -qq stress-ng >/dev/null
  else
    echo "bench-noisy: needs stress-ng (Debian/Ubuntu: apt-get install -y stress-ng; macOS: brew install stress-ng)" >&2
    exit 2
  fi
fi

out=$root/.state/bench/noisy-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
hog=
trap '[ -z "$hog" ] || kill "$hog" 2>/dev/null; "$tracelab" down >/dev/null 2>&1 || true' EXIT
echo "noisy neighbour: stress-ng --cpu $hogs beside each smoke run, $runs run(s) per scenario; logs in $out" >&2
declare -A passed
for s in $scenarios; do
  passed[$s]=0
  for i in $(seq "$runs"); do
    stress-ng --cpu "$hogs" --timeout 3600s >/dev/null 2>&1 &
    hog=$!
    t0=$SECONDS
    rc=0
    one "$s" >"$out/$s-$i.log" 2>&1 || rc=$?
    kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true; hog=
    load=$(cut -d' ' -f1 /proc/loadavg)
    case $rc in
      0) verdict=PASS; passed[$s]=$((passed[$s] + 1)) ;;
      1) verdict=FAIL ;;
      *) verdict="ERROR (exit $rc: $(tail -n1 "$out/$s-$i.log"))" ;;
    esac
    printf '%-15s run %d: %s in %ds, load average %s at the end\n' "$s" "$i" "$verdict" $((SECONDS - t0)) "$load"
    grep -E '^  FAIL|^\s+[a-z_]+_test\.go:[0-9]+: ' "$out/$s-$i.log" || true
  done
done
echo
echo "pass rate beside stress-ng --cpu $hogs ($(getconf _NPROCESSORS_ONLN) CPUs):"
for s in $scenarios; do printf '  %-15s %d/%d\n' "$s" "${passed[$s]}" "$runs"; done
