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

# PostgreSQL refuses to run as root; as root, run it as the postgres account
# the Debian package creates, and let that account own the files.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "run-postgres: running as root needs the 'postgres' user (apt-get install postgresql-15 creates it)" >&2; exit 1; }
  as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups)
fi
mkdir -p "$sockets" "$(dirname "$data")"
[ ${#as_pg[@]} = 0 ] || chown postgres: "$sockets"

if [ ! -f "$data/PG_VERSION" ]; then
  # Built aside and renamed, so an interrupted first start leaves nothing half-made.
  tmp=$data.init
  rm -rf "$tmp"; mkdir -p "$tmp"
  [ ${#as_pg[@]} = 0 ] || chown postgres: "$tmp"
  echo "run-postgres: creating the cluster in $data"
  "${as_pg[@]}" "$PG_BIN_DIR/initdb" -D "$tmp" -U lab --auth=trust -E UTF8 --locale=C >/dev/null
  mv "$tmp" "$data"
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
