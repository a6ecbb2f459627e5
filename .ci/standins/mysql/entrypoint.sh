#!/bin/bash
# Stand-in for the official mysql image's entrypoint, built here from
# Debian's mysqld (no registry can be reached): the part of the official
# interface the lab relies on. MYSQL_ROOT_PASSWORD or
# MYSQL_ALLOW_EMPTY_PASSWORD (one is required, as there), MYSQL_DATABASE,
# MYSQL_USER and MYSQL_PASSWORD on first start; root may log in from any
# host; mysqld's own flags after the image name (command: [--max-connections=500]);
# data in /var/lib/mysql; no reverse DNS of clients (skip-name-resolve, as
# the official image's configuration has it); the "ready for connections ... port: 3306  MySQL
# Community Server" line testcontainers waits for.
set -euo pipefail
DATADIR=/var/lib/mysql
SOCK=/run/mysqld/mysqld.sock
if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- mysqld "$@"; fi
[ "$1" = mysqld ] || exec "$@"
shift

log() { echo "$(date -u +%FT%T.000000Z) 0 [Note] [Entrypoint]: $*"; }
mkdir -p "$DATADIR" /run/mysqld
chown -R mysql:mysql "$DATADIR" /run/mysqld

if [ ! -d "$DATADIR/mysql" ]; then
  if [ -z "${MYSQL_ROOT_PASSWORD:-}" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ]; then
    echo "error: database is uninitialized and password option is not specified" >&2
    echo "  You need to specify one of MYSQL_ROOT_PASSWORD or MYSQL_ALLOW_EMPTY_PASSWORD" >&2
    exit 1
  fi
  log "initializing the data directory"
  mysqld --no-defaults --initialize-insecure --user=mysql --datadir="$DATADIR"
  mysqld --no-defaults --user=mysql --datadir="$DATADIR" --skip-networking --mysqlx=OFF \
    --secure-file-priv= --socket=/run/mysqld/init.sock &
  init=$!
  for _ in $(seq 120); do
    mysqladmin --socket=/run/mysqld/init.sock -uroot ping >/dev/null 2>&1 && break
    kill -0 $init 2>/dev/null || { echo "error: the initializing mysqld ended; its log is above" >&2; exit 1; }
    sleep 0.5
  done
  q() { printf '%s' "$1" | sed "s/'/''/g"; }
  sql="CREATE USER 'root'@'%' IDENTIFIED BY '$(q "${MYSQL_ROOT_PASSWORD:-}")';"
  sql+="GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
  if [ -n "${MYSQL_ROOT_PASSWORD:-}" ]; then
    sql+="ALTER USER 'root'@'localhost' IDENTIFIED BY '$(q "$MYSQL_ROOT_PASSWORD")';"
  fi
  if [ -n "${MYSQL_DATABASE:-}" ]; then
    sql+="CREATE DATABASE IF NOT EXISTS \`${MYSQL_DATABASE//\`/}\`;"
  fi
  if [ -n "${MYSQL_USER:-}" ] && [ "${MYSQL_USER}" != root ]; then
    sql+="CREATE USER '$(q "$MYSQL_USER")'@'%' IDENTIFIED BY '$(q "${MYSQL_PASSWORD:-}")';"
    if [ -n "${MYSQL_DATABASE:-}" ]; then
      sql+="GRANT ALL ON \`${MYSQL_DATABASE//\`/}\`.* TO '$(q "$MYSQL_USER")'@'%';"
    fi
  fi
  mysql --socket=/run/mysqld/init.sock -uroot -e "$sql"
  mysqladmin --socket=/run/mysqld/init.sock -uroot ${MYSQL_ROOT_PASSWORD:+-p"$MYSQL_ROOT_PASSWORD"} shutdown
  wait "$init" || true
  log "initialized"
fi

mysqld --no-defaults --user=mysql --datadir="$DATADIR" --port=3306 --bind-address=0.0.0.0 \
  --socket="$SOCK" --mysqlx=OFF --secure-file-priv= --skip-name-resolve "$@" &
pid=$!
trap 'kill -TERM $pid' TERM INT
# Debian's mysqld ends its ready line with "(Debian)"; the line the official
# image prints, and testcontainers waits for, once the server answers,
# however long that takes (the official server prints it whenever it is
# ready; a cap here left a slow start silent for good):
while kill -0 $pid 2>/dev/null; do
  if mysqladmin --socket="$SOCK" -uroot ${MYSQL_ROOT_PASSWORD:+-p"$MYSQL_ROOT_PASSWORD"} ping >/dev/null 2>&1; then
    echo "$(date -u +%FT%T.000000Z) 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections. Version: '$(mysqld --version | awk '{print $3}')'  socket: '$SOCK'  port: 3306  MySQL Community Server - GPL (stand-in: Debian's mysqld)."
    break
  fi
  sleep 0.5
done
wait $pid
