#!/usr/bin/env bash
# Runs the lab's own PostgreSQL on 127.0.0.1:POSTGRES_PORT, with its data in
# .state/data/postgres. The first start creates the cluster; every start makes
# sure the lab's databases exist, so starting again is always safe. Schemas
# are the services' business (Flyway in orders).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
if [ -z "${PG_BIN_DIR:-}" ] && [ -f "$state/tools.env" ]; then . "$state/tools.env"; fi
: "${PG_BIN_DIR:?PG_BIN_DIR is not set; run infra/local/tools.sh}"
: "${POSTGRES_PORT:?POSTGRES_PORT is not set (infra/local/ports.env)}"
databases=(orders ledger)
data=$state/data/postgres
sockets=$state/run/postgres

# PostgreSQL refuses to run as root. As root, it runs as an unprivileged
# account (postgres if the system has one, else nobody) that owns its files;
# the binaries then come from a copy under the state folder, since the tool
# cache in root's home is closed to other users.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  account=postgres
  id "$account" >/dev/null 2>&1 || account=nobody
  as_pg=(setpriv --reuid="$account" --regid="$(id -g "$account")" --init-groups)
  if ! "${as_pg[@]}" test -x "$PG_BIN_DIR/postgres"; then
    dist=$state/run/postgres-$(printf '%s' "$PG_BIN_DIR" | cksum | cut -d' ' -f1)
    if [ ! -x "$dist/bin/postgres" ]; then
      rm -rf "$dist.tmp"; mkdir -p "$(dirname "$dist")"
      cp -a "$(dirname "$PG_BIN_DIR")" "$dist.tmp" && chmod -R a+rX "$dist.tmp" && mv "$dist.tmp" "$dist"
    fi
    PG_BIN_DIR=$dist/bin
    "${as_pg[@]}" test -x "$PG_BIN_DIR/postgres" ||
      { echo "run-postgres: as root, PostgreSQL runs as '$account', which cannot reach $state; run the lab as an ordinary user" >&2; exit 1; }
  fi
fi
mkdir -p "$sockets" "$(dirname "$data")"
[ ${#as_pg[@]} = 0 ] || chown "$account:" "$sockets"

# The lab's data is disposable (each run counts what it writes), so a
# cluster of another major version, e.g. from the Debian package the lab
# once used, is made anew rather than upgraded.
major=$("$PG_BIN_DIR/postgres" --version | awk '{print $3}' | cut -d. -f1)
if [ -f "$data/PG_VERSION" ] && [ "$(cat "$data/PG_VERSION")" != "$major" ]; then
  echo "run-postgres: $data holds a PostgreSQL $(cat "$data/PG_VERSION") cluster; making a new one for PostgreSQL $major"
  rm -rf "$data"
fi
if [ ! -f "$data/PG_VERSION" ]; then
  # Built aside and renamed, so an interrupted first start leaves nothing half-made.
  tmp=$data.init
  rm -rf "$tmp"; mkdir -p "$tmp"
  [ ${#as_pg[@]} = 0 ] || chown "$account:" "$tmp"
  echo "run-postgres: creating the cluster in $data"
  "${as_pg[@]}" "$PG_BIN_DIR/initdb" -D "$tmp" -U lab --auth=trust -E UTF8 --locale=C >/dev/null
  mv "$tmp" "$data"
fi

# A PostgreSQL killed with -9 leaves its postmaster.pid and its socket's
# lock, and its backends stay attached to its shared memory until they
# notice, within about a second, that their postmaster is gone. PostgreSQL
# refuses to start while they are attached, and over a lock whose pid is
# alive, which after a kill may be any other program's. So: wait for the old
# cluster's processes, known by their working directory (every PostgreSQL
# process runs in its data directory), and then remove the locks.
cluster_processes() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$data" ] && echo "${p#/proc/}"
  done
  return 0
}
if [ -f "$data/postmaster.pid" ]; then
  old=$(head -n1 "$data/postmaster.pid")
  for _ in $(seq 50); do
    left=$(cluster_processes)
    [ -z "$left" ] && break
    grep -qx "$old" <<<"$left" && { echo "run-postgres: PostgreSQL (pid $old) still runs on $data; stop it first (make down)" >&2; exit 1; }
    sleep 0.1
  done
  [ -z "$left" ] || { echo "run-postgres: stopping the backends of a killed PostgreSQL: $(echo $left)"; kill -9 $left 2>/dev/null || true; }
  echo "run-postgres: removing the locks of a PostgreSQL that did not stop (pid $old)"
  rm -f "$data/postmaster.pid" "$sockets/.s.PGSQL.$POSTGRES_PORT.lock"
fi

existing=$(echo "SELECT datname FROM pg_database" | "${as_pg[@]}" "$PG_BIN_DIR/postgres" --single -D "$data" postgres 2>/dev/null)
for db in "${databases[@]}"; do
  if ! grep -q "datname = \"$db\"" <<<"$existing"; then
    echo "run-postgres: creating database $db"
    echo "CREATE DATABASE $db" | "${as_pg[@]}" "$PG_BIN_DIR/postgres" --single -D "$data" postgres >/dev/null
  fi
done

# synchronous_commit=off: each order commits once in every variant, and the
# lab measures round trips, not how fast this machine's disk flushes.
exec "${as_pg[@]}" "$PG_BIN_DIR/postgres" -D "$data" \
  -c listen_addresses=127.0.0.1 -p "$POSTGRES_PORT" -c unix_socket_directories="$sockets" \
  -c max_connections=100 -c synchronous_commit=off -c log_min_messages=warning
