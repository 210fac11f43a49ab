#!/bin/sh
# Entrypoint of the PostgreSQL image (deploy/postgres/Dockerfile).
#
# First start (no $PGDATA/PG_VERSION): initdb with the superuser $POSTGRES_USER and the password in
# $POSTGRES_PASSWORD (required; it never appears on a command line), password authentication
# (scram-sha-256) for every TCP client, trust only on the container's own Unix socket; then the database
# $POSTGRES_DB (default: $POSTGRES_USER) is created in single-user mode, so no client can connect before the
# database exists. Every start: exec the server ("postgres", the default command) on all interfaces, or any
# other command given.
set -eu

: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"

log() { echo "postgres-entrypoint: $*" >&2; }

if [ "${1:-}" = "postgres" ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        log "POSTGRES_PASSWORD is required to create the cluster (the database is reached with a password)"
        exit 1
    fi
    log "creating the cluster in $PGDATA (superuser $POSTGRES_USER, database $POSTGRES_DB)"
    pwfile=$(mktemp)
    trap 'rm -f "$pwfile"' EXIT
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 \
        --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != "postgres" ]; then
        # Identifiers are quoted (a doubled quote escapes one), so any name is taken literally.
        db=$(printf '%s' "$POSTGRES_DB" | sed 's/"/""/g')
        owner=$(printf '%s' "$POSTGRES_USER" | sed 's/"/""/g')
        echo "CREATE DATABASE \"$db\" OWNER \"$owner\"" | postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    log "cluster ready"
fi

if [ "${1:-}" = "postgres" ]; then
    shift
    exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
