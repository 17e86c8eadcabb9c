#!/usr/bin/env bash
# Tests infra/local/jobs.sh, the side-by-side jobs of tools.sh (make
# test-static runs it; a few seconds). JOBS_SH=FILE tests another
# implementation of in_parallel and await_all.
#
# The failure it guards against: a finished job's PID reused by a new child
# of the shell, after which `wait PID` says "not a child of this shell" and
# a job that succeeded is reported failed. The test forces that reuse by
# setting the kernel's last-allocated PID (/proc/sys/kernel/ns_last_pid)
# just below the finished job's, then starting a foreground child. It does
# so in a PID namespace of its own, where no other process takes PIDs, when
# unshare can make one; writing ns_last_pid needs root in that namespace.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
impl=${JOBS_SH:-$here/jobs.sh}

# An unprivileged user (CI's) gets root's say over a PID namespace inside
# a user namespace of its own, where the kernel allows unprivileged ones.
if [ "${1:-}" != --in-pid-namespace ]; then
  if [ "$(id -u)" = 0 ] && unshare --pid --fork true 2>/dev/null; then
    exec unshare --pid --fork bash "${BASH_SOURCE[0]}" --in-pid-namespace
  elif unshare --user --map-root-user --pid --fork --mount-proc true 2>/dev/null; then
    exec unshare --user --map-root-user --pid --fork --mount-proc bash "${BASH_SOURCE[0]}" --in-pid-namespace
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
not_ok() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; }

# session runs CMDS in a fresh shell set up as tools.sh sets itself up, and
# prints what await_all said (stderr) and its exit status.
session() {
  local dir; dir=$(mktemp -d "$tmp/jobs.XXXX")
  bash -c '
    set -euo pipefail
    cache='"$tmp"' jobs='"$dir"' pids=() names=()
    echo $$ >"$jobs/shell.pid"
    die() { printf "tools: %s\n" "$*" >&2; exit 1; }
    . "'"$impl"'"
    '"$1" 2>&1 && echo "status 0" || echo "status $?"
}

# 1. Each job's own status, whatever the way it ended.
out=$(session '
  boom() { false; echo unreachable; }
  in_parallel ok echo /path/to/ok
  in_parallel bad false
  in_parallel dies boom
  in_parallel slow bash -c "sleep 1.5"
  await_all')
if grep -qx 'tools: failed: bad dies (see the messages above and .*/logs/)' <<<"$out" && grep -qx 'status 1' <<<"$out"; then
  ok "a failing job, and one stopped by set -e, are reported failed; the others pass"
else
  not_ok "statuses: got: $out"
fi
out=$(session 'in_parallel a true; in_parallel b echo b-path; await_all; cat "$jobs/b"')
if [ "$out" = $'b-path\nstatus 0' ]; then ok "all jobs pass: await_all returns 0, outputs kept"; else not_ok "all pass: got: $out"; fi

# 2. PID reuse: the finished job "fetched"'s PID goes to a foreground child
# of the same shell before await_all runs.
# The file's mode says anyone may write it; the kernel refuses all but
# root (CAP_SYS_ADMIN), so try: writing its own value changes nothing.
can_set_last_pid() {
  local v
  v=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null) && (echo "$v" >/proc/sys/kernel/ns_last_pid) 2>/dev/null
}
if can_set_last_pid; then
  out=$(session '
    in_parallel fetched true
    while kill -0 "${pids[0]}" 2>/dev/null; do sleep 0.1; done
    reused=
    for try in $(seq 50); do
      echo $(( pids[0] - 1 )) >/proc/sys/kernel/ns_last_pid
      /bin/sh -c "echo \$\$ >\"\$0\"" "$jobs/child"
      read -r child <"$jobs/child"
      if [ "$child" = "${pids[0]}" ]; then reused=1; break; fi
    done
    [ -n "$reused" ] || { echo "could not reuse PID ${pids[0]}"; exit 9; }
    echo "PID ${pids[0]} reused after $try tries"
    in_parallel broken false
    await_all')
  if grep -q 'could not reuse' <<<"$out"; then
    skipped=$((skipped + 1)); printf 'skip  PID reuse: %s\n' "$(head -n1 <<<"$out")"
  elif grep -qx 'tools: failed: broken (see the messages above and .*/logs/)' <<<"$out" && grep -qx 'status 1' <<<"$out"; then
    ok "a job whose PID a later child reused still passes ($(grep -o 'PID [0-9]* reused after [0-9]* tries' <<<"$out")); a failing one fails"
  else
    not_ok "PID reuse: got: $out"
  fi
else
  skipped=$((skipped + 1)); echo "skip  PID reuse: the kernel refuses to set /proc/sys/kernel/ns_last_pid (needs root on Linux)"
fi

# 3. TERM (what await_all's trap turns Ctrl-C into) stops the jobs: nothing
# is left running. The job waits like tools.sh's run_logged.
session '
  long() { sleep 30 & local p=$!; echo "$p" >"$jobs/sleep.pid"; trap "kill $p; exit 130" INT TERM; while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; }
  in_parallel long long
  await_all' >"$tmp/term.out" &
runner=$!
sleeper= dir=
for _ in $(seq 50); do
  for f in "$tmp"/jobs.*/sleep.pid; do [ -s "$f" ] && dir=$(dirname "$f") && sleeper=$(cat "$f"); done
  [ -n "$sleeper" ] && break; sleep 0.1
done
[ -n "$dir" ] && kill -TERM "$(cat "$dir/shell.pid")"
wait "$runner" || true
for _ in $(seq 30); do kill -0 "$sleeper" 2>/dev/null || break; sleep 0.1; done
if [ -n "$sleeper" ] && ! kill -0 "$sleeper" 2>/dev/null && grep -qx 'status 130' "$tmp/term.out"; then
  ok "TERM stops await_all (status 130) and the job's child"
else
  not_ok "TERM: sleeper ${sleeper:-?} $(kill -0 "${sleeper:-0}" 2>/dev/null && echo 'still running'); got: $(cat "$tmp/term.out")"
  [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
fi

echo "jobs.sh: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
