#!/bin/sh
# Gives the lab's PostgreSQL role, on a data directory that already holds a
# cluster, the password of the Secret "postgres". The postgres image applies
# POSTGRES_PASSWORD only when it creates the cluster (initdb), so after a
# rotation (k8s/README.md, "Security defaults") every service would fail to
# log in with the new password while the volume kept the old one.
#
# The StatefulSet runs it before PostgreSQL starts (an initContainer), in
# single-user mode: no socket, no network and no client authentication to
# relax, and nothing left running when it ends. On an empty volume it does
# nothing: the image's initdb sets the password there.
# tracelab/internal/pgpassword runs it against a real PostgreSQL.
set -eu
: "${PGDATA:?PGDATA is not set}"
: "${POSTGRES_USER:?POSTGRES_USER is not set}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set (the Secret postgres)}"
say() { echo "set-postgres-password: $*" >&2; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  say "no cluster in $PGDATA yet; the image's initdb will set the password"
  exit 0
fi
case $POSTGRES_PASSWORD in
  *"
"*) say "POSTGRES_PASSWORD holds a line break, which single-user mode would read as the end of the statement; make a new one with k8s/gen-secrets.sh"
    exit 1 ;;
esac

# Quotes inside an SQL identifier or literal are doubled.
role=$(printf '%s' "$POSTGRES_USER" | sed 's/"/""/g')
password=$(printf '%s' "$POSTGRES_PASSWORD" | sed "s/'/''/g")
# A statement that fails is logged unless log_min_error_statement is above
# ERROR; this one holds the password. Single-user mode exits 0 after an
# ERROR, so the output says whether the statement worked.
out=$(printf 'ALTER ROLE "%s" PASSWORD '"'"'%s'"'"'\n' "$role" "$password" |
  postgres --single -D "$PGDATA" -c log_line_prefix= -c log_min_error_statement=panic -c log_min_messages=warning postgres 2>&1 >/dev/null) || {
  say "PostgreSQL could not start in single-user mode on $PGDATA: $(printf '%s' "$out" | tail -n 1)"
  exit 1
}
if printf '%s\n' "$out" | grep -qE '^(ERROR|FATAL|PANIC):'; then
  say "$(printf '%s\n' "$out" | grep -E '^(ERROR|FATAL|PANIC):' | head -n 1)"
  exit 1
fi
say "the password of role $POSTGRES_USER is the Secret's"
