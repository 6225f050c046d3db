#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests and exports CA_TEST_PG_URL (its admin URL).
# It listens on a unix socket in a temporary directory only (no TCP port), with fsync off: the
# data is thrown away when the shell that sourced this exits. Installs Debian's `postgresql` when
# no server binaries are found. Usage: `source .ci/postgres.sh` (CI does; so can you locally).
set -euo pipefail
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends postgresql ||
    { apt-get update && apt-get install -y --no-install-recommends postgresql; }
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
ca_pg_dir=$(mktemp -d /tmp/ca-pg.XXXXXX)
# initdb refuses to run as root: the cluster belongs to the `postgres` user the package made.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$ca_pg_dir"
  as_pg=(runuser -u postgres --)
fi
"${as_pg[@]}" "$pg_bin/initdb" -D "$ca_pg_dir/data" -A trust -U postgres --no-sync -E UTF8 >"$ca_pg_dir/initdb.log"
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$ca_pg_dir/data" -l "$ca_pg_dir/server.log" -w start \
  -o "-k $ca_pg_dir -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400" >/dev/null
export CA_TEST_PG_URL="postgres://postgres@localhost/postgres?host=$ca_pg_dir"
ca_pg_stop() { "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$ca_pg_dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$ca_pg_dir"; }
trap ca_pg_stop EXIT
"$pg_bin/postgres" --version
