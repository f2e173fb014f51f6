#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of `ahp signals ship` and
# `--db` (the OS package, installed when missing).
#   source <(bash .ci/postgres.sh start)   # prints `export AHP_TEST_POSTGRES=…`
#   bash .ci/postgres.sh stop
# Data and socket live in one temporary folder; the server listens on
# 127.0.0.1 only, on a free port, trusting local connections.
set -euo pipefail
dir=${AHP_PG_DIR:-${TMPDIR:-/tmp}/ahp-test-postgres}
find_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ]; then
            echo "$d"
            return
        fi
    done
}
# PostgreSQL refuses to run as root: as root, the server runs as the
# package's `postgres` user.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}
case ${1:-start} in
start)
    bin=$(find_bin)
    if [ -z "$bin" ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null 2>&1
        bin=$(find_bin)
    fi
    if [ -z "$bin" ]; then
        echo "no PostgreSQL server and it could not be installed" >&2
        exit 1
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U ahp --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
    echo "export AHP_TEST_POSTGRES=postgres://ahp@127.0.0.1:$port/postgres"
    ;;
stop)
    bin=$(find_bin)
    if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
