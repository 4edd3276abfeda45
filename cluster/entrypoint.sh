#!/bin/sh
# Entrypoint of the sharded image (cluster/Dockerfile): the first argument is the node's role.
#
#   head   [OPTIONS]               run a Ray head node in the foreground
#   worker [OPTIONS]               run a Ray worker joining $SHARDED_RAY_ADDRESS (HOST:PORT)
#   client [OPTIONS] [-- CMD ...]  join with a 0-CPU node, wait for the cluster, run CMD
#                                  (default: sharded demo) with RAY_ADDRESS set, then leave
#   help                           show the options of every role
#   anything else                  run as a command (e.g. bash), for debugging
#
# OPTIONS are those of `python -m cluster.ray_cluster ROLE --help`; each has an environment
# variable (SHARDED_RAY_*) so docker-compose can configure nodes without commands of its own.
# The role exec's Python, which exec's `ray start --block`: the container's main process is the
# Ray node, so `docker stop` (SIGTERM) stops Ray cleanly.  The image runs all of it as the
# unprivileged user sharded; what a node writes goes where that user may: Ray's files to
# /tmp/ray, the token to $SHARDED_RAY_TOKEN_FILE (compose: /run/sharded-auth/token) or ~/.ray.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
python=${SHARDED_PYTHON:-python}

role=${1:-help}
[ $# -eq 0 ] || shift
case $role in
head | worker | client)
    exec "$python" -m cluster.ray_cluster "$role" "$@"
    ;;
help | -h | --help)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    for r in head worker client; do
        echo
        "$python" -m cluster.ray_cluster "$r" --help
    done
    ;;
*)
    exec "$role" "$@"
    ;;
esac
