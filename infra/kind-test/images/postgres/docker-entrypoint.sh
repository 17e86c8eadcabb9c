#!/bin/sh
# The part of the postgres image's entrypoint that k8s/base/data/postgres.yaml
# relies on: on an empty PGDATA, initdb with POSTGRES_USER and
# POSTGRES_PASSWORD, POSTGRES_DB created, /docker-entrypoint-initdb.d run
# (*.sql by psql, *.sh sourced) against a server on the socket only; then
# the server, with the arguments given ("-c ..." alone means postgres -c ...).
set -eu
case ${1:-} in -*) set -- postgres "$@" ;; esac
[ "${1:-}" = postgres ] || exec "$@"

# zonky's server is built to put its socket in /tmp; the clients (Debian's)
# and the image's users look in /var/run/postgresql, as the image has it.
set -- "$@" -c unix_socket_directories=/var/run/postgresql
export PGHOST=/var/run/postgresql

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set: the image refuses to create a database without a password}"
  user=${POSTGRES_USER:-postgres} db=${POSTGRES_DB:-${POSTGRES_USER:-postgres}}
  mkdir -p "$PGDATA"; chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  # Locale C and UTF-8, as the local runtime's initdb (run-postgres.sh).
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  # As the image: connections from anywhere, by password.
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w -s -o "-c listen_addresses='' -c unix_socket_directories=$PGHOST" start
  if [ "$db" != postgres ]; then
    psql -v ON_ERROR_STOP=1 -q -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case $f in
      *.sql) echo "docker-entrypoint.sh: running $f"; psql -v ON_ERROR_STOP=1 -q -U "$user" -d "$db" -f "$f" ;;
      *.sh) echo "docker-entrypoint.sh: sourcing $f"; . "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -w -s -m fast stop
  echo "docker-entrypoint.sh: PostgreSQL init process complete; ready for start up."
fi
exec "$@"
