# Side-by-side jobs for infra/local/tools.sh (sourced by it, and by
# jobs_test.sh). The caller sets jobs (a folder), pids=() and names=(), and
# defines die and cache.
#
# Each job records its own exit status in $jobs/NAME.rc as it ends, and
# await_all reads those files: `wait PID` cannot be trusted here. PIDs wrap
# at 32768 on these machines, and bash forgets a finished job's status as
# soon as a new child of the shell (await_all's own `sleep`) reuses its PID;
# `wait` then says "pid N is not a child of this shell" and a fetch that
# succeeded minutes earlier was reported failed.

# in_parallel NAME FUNCTION [ARGS...]: starts one tool's fetch or build in
# the background; its output (the tool's path) lands in $jobs/NAME.
in_parallel() {
  local name=$1; shift
  (
    # EXIT runs on every way out (success, set -e, die, a trapped signal)
    # with the status in $?. The rename makes the file appear complete.
    trap 'printf "%s\n" "$?" >"$jobs/$name.rc.tmp"; mv -f "$jobs/$name.rc.tmp" "$jobs/$name.rc"' EXIT
    TOOLS_IN_PARALLEL=1 "$@" >"$jobs/$name"
  ) &
  pids+=("$!") names+=("$name")
}

# await_all waits for every job, saying every 30 s which are still running,
# and dies naming those that failed. Ctrl-C or TERM stops them all.
await_all() {
  local start=$SECONDS shown=$SECONDS i running failed=() rc
  trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM
  while :; do
    running=()
    for i in "${!names[@]}"; do
      # A job writes its status before it exits, so one with no file that
      # is gone was killed; the final check below counts it failed.
      [ -f "$jobs/${names[$i]}.rc" ] && continue
      kill -0 "${pids[$i]}" 2>/dev/null && running+=("${names[$i]}")
    done
    [ ${#running[@]} = 0 ] && break
    if (( SECONDS - shown >= 30 )); then
      shown=$SECONDS
      printf '    ... still working (%ds): %s\n' $((SECONDS - start)) "${running[*]}" >&2
    fi
    sleep 1
  done
  trap - INT TERM
  # Reaps the jobs, so none is left a zombie; with no PID, wait never
  # fails on a forgotten one, and the statuses come from the files.
  wait
  for i in "${!names[@]}"; do
    rc=$(cat "$jobs/${names[$i]}.rc" 2>/dev/null) || rc=
    [ "$rc" = 0 ] || failed+=("${names[$i]}")
  done
  [ ${#failed[@]} = 0 ] || die "failed: ${failed[*]} (see the messages above and $cache/logs/)"
}
