#!/bin/bash
# Stand-in for the official rabbitmq:4-management image's entrypoint, built
# here from Debian's rabbitmq-server (no registry can be reached): the part
# of the official interface the lab relies on. RABBITMQ_DEFAULT_USER and
# RABBITMQ_DEFAULT_PASS (guest/guest otherwise, allowed from any host, as
# there), the management plugin on 15672, AMQP on 5672, configuration files
# in /etc/rabbitmq/conf.d/ and the cookie at /var/lib/rabbitmq/.erlang.cookie
# (the compose file's cluster mounts both), logs on the console with the
# "Server startup complete" line testcontainers waits for, and
# rabbitmq-diagnostics for a health check.
set -euo pipefail
if [ $# -eq 0 ]; then set -- rabbitmq-server; fi
[ "$1" = rabbitmq-server ] || exec "$@"

mkdir -p /etc/rabbitmq/conf.d /var/lib/rabbitmq /var/log/rabbitmq
{
  echo "loopback_users.guest = false"
  echo "listeners.tcp.default = 5672"
  echo "management.tcp.port = 15672"
  echo "log.console = true"
  echo "log.console.level = info"
  echo "log.file = false"
  echo "default_user = ${RABBITMQ_DEFAULT_USER:-guest}"
  echo "default_pass = ${RABBITMQ_DEFAULT_PASS:-guest}"
} >/etc/rabbitmq/conf.d/10-defaults.conf
echo '[rabbitmq_management].' >/etc/rabbitmq/enabled_plugins
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
if [ -f /var/lib/rabbitmq/.erlang.cookie ]; then
  chmod 600 /var/lib/rabbitmq/.erlang.cookie 2>/dev/null || true
fi
export RABBITMQ_LOGS=- HOME=/var/lib/rabbitmq
# Debian's /usr/sbin/rabbitmq-server sends the output to a file: the real
# script, on the console.
exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups /usr/lib/rabbitmq/bin/rabbitmq-server
