#!/bin/bash
# Start a Ray cluster inside an interactive Slurm allocation.
#
#   salloc -N 2 --cpus-per-task=8 bash scripts/salloc_ray.sh [OPTIONS] [MODE]
#   MODE: --shell (default) | --print | -- PROGRAM [ARGS...]
#   bash scripts/salloc_ray.sh --help

set -euo pipefail

salloc_ray_usage() {
    cat <<'EOF'
Usage: salloc [SALLOC OPTIONS] bash scripts/salloc_ray.sh [OPTIONS] [MODE]

Inside an allocation, start a Ray cluster on its nodes (head on the first node, one worker on
each other node), wait until every node has registered, then, by MODE:

  --shell         (default) open a shell on the head node with RAY_ADDRESS (and the auth token)
                  exported; `python my_program.py` there connects with `st.init()`. Leaving the
                  shell stops Ray on every node.
  --print         print the variables to export and keep the cluster up until Ctrl-C or the end
                  of the allocation. Drivers must run on a Ray node: use
                  `srun --overlap --nodes=1 --ntasks=1 -w HEAD --pty bash` to get there.
  -- PROGRAM ...  run PROGRAM ARGS on the head node, then stop Ray; exit with PROGRAM's status.

Example:
  salloc -N 2 --cpus-per-task=8 bash scripts/salloc_ray.sh -- python -m cluster.smoke

Run from the sharded checkout (or set SHARDED_ROOT).

EOF
    sr_common_usage
}

salloc_ray_root() {
    local d
    for d in "${SHARDED_ROOT:-}" "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null && pwd)" \
        "$PWD"; do
        if [ -n "$d" ] && [ -f "$d/cluster/slurm_ray.sh" ]; then
            echo "$d"
            return 0
        fi
    done
    echo "sharded: error: cannot find the sharded checkout (cluster/slurm_ray.sh):" \
        "run from it or set SHARDED_ROOT" >&2
    return 1
}

SHARDED_ROOT=$(salloc_ray_root)
export SHARDED_ROOT
# shellcheck source=../cluster/slurm_ray.sh
source "$SHARDED_ROOT/cluster/slurm_ray.sh"

mode=shell
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) salloc_ray_usage; exit 0 ;;
    --shell) mode=shell; shift ;;
    --print) mode=print; shift ;;
    --) mode=run; shift; break ;;
    -*) sr_parse_option "$@" || sr_die "unknown option $1 (see --help)"; shift "$SR_SHIFT" ;;
    *) mode=run; break ;;
    esac
done
[ "$mode" != run ] || [ $# -gt 0 ] || sr_die "no program after -- (see --help)"

sr_start

exports="export RAY_ADDRESS=$RAY_ADDRESS"
[ -z "${RAY_AUTH_TOKEN:-}" ] ||
    exports+=" RAY_AUTH_MODE=$RAY_AUTH_MODE RAY_AUTH_TOKEN=$RAY_AUTH_TOKEN"
case $mode in
run)
    status=0
    sr_run "$@" || status=$?
    sr_log "program exited with status $status"
    exit "$status"
    ;;
print)
    cat <<EOF
Ray cluster is up on ${#SR_NODES[@]} nodes; head $SR_HEAD at $RAY_ADDRESS.
Drivers must run on a Ray node, e.g. the head:
  srun --overlap --nodes=1 --ntasks=1 -w $SR_HEAD --pty bash
and there:
  $exports
  export PYTHONPATH=$PYTHONPATH
Press Ctrl-C (or end the allocation) to stop Ray.
EOF
    # `wait` on a background sleep, so INT/TERM reach the trap at once.
    sleep infinity &
    SR_PROG=$!
    wait "$SR_PROG" || true
    ;;
shell)
    sr_log "opening a shell on $SR_HEAD with RAY_ADDRESS=$RAY_ADDRESS; exit it to stop Ray"
    shell_cmd=("${SR_STEP[@]}" -w "$SR_HEAD")
    # A pseudo-terminal only for a terminal: a piped script (stdin) is fed to the shell as is.
    [ ! -t 0 ] || shell_cmd+=(--pty)
    status=0
    # In the foreground: an interactive shell needs the terminal.
    "${shell_cmd[@]}" "${SHELL:-/bin/bash}" || status=$?
    exit "$status"
    ;;
esac
