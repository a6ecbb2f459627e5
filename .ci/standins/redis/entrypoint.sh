#!/bin/bash
# Stand-in for the official redis:7 image's entrypoint, built here from
# Debian's redis-server (no registry can be reached): the part of the
# official interface the lab relies on. redis-server's flags after the
# image name (command: [redis-server, --save, ""]), protected mode off
# (the official image builds it so: a container is reached from outside),
# and the "Ready to accept connections" line testcontainers waits for.
set -euo pipefail
if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
[ "$1" = redis-server ] || exec "$@"
shift
# Appended, so a configuration file named first stays first; a flag the
# command gives itself is left alone.
case " $* " in *" --protected-mode "*) ;; *) set -- "$@" --protected-mode no ;; esac
case " $* " in *" --dir "*) ;; *) set -- "$@" --dir /data ;; esac
mkdir -p /data
chown redis:redis /data
exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@"
