#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on 127.0.0.1 for the test suite and prints its DATABASE_URL.
# Installs Debian's postgresql package first when the machine lacks it (CI runs as root).
# Usage: eval "$(bash .ci/postgres.sh start)"   ...   bash .ci/postgres.sh stop "$PG_TEST_DATA"
set -euo pipefail

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

case "${1:-start}" in
  start)
    if [ -z "$(pg_bin)" ] || [ ! -x "$(pg_bin)/initdb" ]; then
      echo "installing Debian's postgresql package" >&2
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    bin=$(pg_bin)
    port=${PG_TEST_PORT:-54329}
    data=$(mktemp -d /tmp/pg-test-XXXXXX)
    chown postgres:postgres "$data"
    runuser -u postgres -- "$bin/initdb" -D "$data/db" -A trust -U postgres >/dev/null
    runuser -u postgres -- "$bin/pg_ctl" -D "$data/db" -l "$data/log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c max_connections=200" start >&2
    echo "export PG_TEST_DATA=$data"
    echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    data=${2:?data directory}
    runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$data/db" -m fast -w stop >&2 || true
    rm -rf "$data"
    ;;
esac
