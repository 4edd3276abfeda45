# shellcheck shell=bash
# Start and stop a Ray cluster over the nodes of the current Slurm allocation.
#
# Sourced by scripts/sbatch_ray.sh and scripts/salloc_ray.sh (never run on its own), after they
# set SHARDED_ROOT.  It follows Ray's documented Slurm recipe (head on one node with
# `srun --nodes=1 --ntasks=1 -w HEAD`, one worker step per remaining node), but every node is
# started through `python -m cluster.ray_cluster`, the same helper Docker and the tests use.
#
# Each Ray node is one `srun` step running `ray start --block`; stopping a node is SIGTERM to
# its srun (forwarded to the step), so nothing but this job's Ray processes is touched.
#
# Files on shared machines: the log directory is private (mode 0700, this user's; an existing
# one open to others is refused) and each log a new file in it; every node's helper does the
# same with TEMP_DIR/NODE on that node, Ray's own (world-writable) tree going inside it.

SR_PORT=6379
SR_NUM_CPUS=${SLURM_CPUS_PER_TASK:-}
SR_NUM_GPUS=
SR_OBJECT_STORE_MEMORY=
SR_INTERFACE=
SR_TEMP_DIR=
SR_LOG_DIR=
SR_TIMEOUT=300
SR_STOP_TIMEOUT=30
SR_PYTHON=${SHARDED_PYTHON:-python3}
SR_AUTH=1
SR_DASHBOARD=0
SR_RAY_ARGS=()
SR_PIDS=()    # srun processes of the Ray nodes, head first
SR_ROLES=()   # "head NODE" / "worker NODE", parallel to SR_PIDS
SR_LOGS=()    # their log files, parallel to SR_PIDS
SR_NODES=()
SR_WORKERS=()
SR_HEAD=
SR_STEP=()
SR_PROG=

sr_log() { echo "sharded: [$(date +%T)] $*" >&2; }
sr_die() { echo "sharded: error: $*" >&2; exit 1; }

sr_common_usage() {
    cat <<'EOF'
Ray options (for both scripts; `--opt value` or `--opt=value`):
  --port N                 GCS port of the head; the cluster address is HEAD_IP:N (default 6379)
  --num-cpus N             CPUs each Ray node offers (default: the job's --cpus-per-task if set,
                           else all CPUs Ray sees on the node)
  --num-gpus N             GPUs each Ray node offers (default: detected on each node from
                           CUDA_VISIBLE_DEVICES, which `#SBATCH --gres=gpu:N` sets, else nvidia-smi)
  --object-store-memory S  object store per node, bytes or with K/M/G suffix, e.g. 8G
                           (default: Ray's, 30% of the node's RAM)
  --interface IF           advertise each node's address on this interface, e.g. ib0
                           (default: the head's default-route address; workers the route to it)
  --temp-dir DIR           Ray's session files, in DIR/NODE/ray on every node; DIR/NODE is made
                           mode 0700 (DIR too when missing) and refused when another user's or
                           open to others (default /tmp/sharded-ray-JOBID)
  --log-dir DIR            where each node's `ray start` output goes, as new files ROLE-NODE-*.log;
                           made mode 0700, refused when another user's or open to others
                           (default SUBMIT_DIR/sharded-ray-JOBID-logs)
  --timeout S              seconds to wait for all nodes to register before giving up (default 300)
  --python PATH            Python that has ray and sharded installed, on every node
                           (default $SHARDED_PYTHON, else python3 on PATH)
  --no-auth                start Ray without token authentication (default: a fresh random token
                           per job, exported with RAY_AUTH_MODE=token as RAY_AUTH_TOKEN)
  --dashboard              also run the Ray dashboard on the head, port 8265 of its loopback
                           (reach it with `ssh -L 8265:127.0.0.1:8265 HEAD`; needs ray[default])
  --ray-arg ARG            extra argument for every `ray start`, repeatable
                           (e.g. --ray-arg=--object-manager-port=8076)
  -h, --help               show this help

Environment: SHARDED_ROOT (the sharded checkout holding cluster/; found automatically when the
script is run from it or submitted from it), SHARDED_PYTHON (as --python).
The program gets RAY_ADDRESS=HEAD_IP:PORT (and RAY_AUTH_MODE/RAY_AUTH_TOKEN unless --no-auth),
so `st.init()` connects to the cluster. Ray output: see --log-dir.
EOF
}

# Parse one common option at the front of "$@".  Sets SR_SHIFT to the number of words used;
# returns 1 when "$1" is not one of ours (the caller decides what it is).
sr_parse_option() {
    local name=$1 value
    case $name in
    --no-auth) SR_AUTH=0; SR_SHIFT=1; return 0 ;;
    --dashboard) SR_DASHBOARD=1; SR_SHIFT=1; return 0 ;;
    --port | --num-cpus | --num-gpus | --object-store-memory | --interface | --temp-dir | \
        --log-dir | --timeout | --python | --ray-arg)
        [ $# -ge 2 ] || sr_die "option $name needs a value (see --help)"
        value=$2
        SR_SHIFT=2
        ;;
    --port=* | --num-cpus=* | --num-gpus=* | --object-store-memory=* | --interface=* | \
        --temp-dir=* | --log-dir=* | --timeout=* | --python=* | --ray-arg=*)
        value=${name#*=}
        name=${name%%=*}
        SR_SHIFT=1
        ;;
    *) return 1 ;;
    esac
    case $name in
    --port) SR_PORT=$value ;;
    --num-cpus) SR_NUM_CPUS=$value ;;
    --num-gpus) SR_NUM_GPUS=$value ;;
    --object-store-memory) SR_OBJECT_STORE_MEMORY=$value ;;
    --interface) SR_INTERFACE=$value ;;
    --temp-dir) SR_TEMP_DIR=$value ;;
    --log-dir) SR_LOG_DIR=$value ;;
    --timeout) SR_TIMEOUT=$value ;;
    --python) SR_PYTHON=$value ;;
    --ray-arg) SR_RAY_ARGS+=("--ray-arg=$value") ;;
    esac
}

sr_install_traps() {
    trap 'sr_stop' EXIT
    # A trapped signal interrupts `wait`, so the program and Ray are stopped at once even while
    # the program runs; Slurm sends TERM on scancel and at the time limit.
    trap 'sr_log "interrupted"; sr_kill_program; exit 130' INT
    trap 'sr_log "terminated (scancel or time limit?)"; sr_kill_program; exit 143' TERM
    trap 'sr_kill_program; exit 129' HUP
}

sr_kill_program() {
    [ -z "$SR_PROG" ] || kill -TERM "$SR_PROG" 2>/dev/null || true
}

# Make directory $1 private (mode 0700 when created), or refuse it: it must be a real directory
# (not a symlink) of this user with no access for group or others.  Another user who could
# write there could plant symlinks where the logs go, or read them.
sr_private_dir() {
    local dir=$1 owner mode
    (umask 077 && mkdir -p -- "$dir") || sr_die "cannot create directory $dir"
    [ ! -L "$dir" ] || sr_die "refusing $dir: it is a symlink; give the real directory"
    [ -d "$dir" ] || sr_die "refusing $dir: it is not a directory"
    owner=$(stat -c %u -- "$dir") && mode=$(stat -c %a -- "$dir") ||
        sr_die "cannot stat $dir"
    [ "$owner" = "$(id -u)" ] ||
        sr_die "refusing $dir: it is owned by uid $owner, not by this user (uid $(id -u))"
    [ $((8#$mode & 8#077)) = 0 ] ||
        sr_die "refusing $dir: it has mode $mode: group or others may use it" \
            "(chmod 700 it, or name a new directory)"
}

# A new, empty log file (mode 0600) for Ray node "$1 $2" in the private log dir; its path is
# printed.  mktemp creates it exclusively, never through something already there.
sr_new_log() {
    mktemp --suffix=.log -- "$SR_LOG_DIR/$1-$2-XXXXXX" ||
        sr_die "cannot create a log file in $SR_LOG_DIR"
}

# Start one Ray node per allocated node and wait until all have registered.
sr_start() {
    [ -n "${SLURM_JOB_ID:-}" ] || sr_die "not inside a Slurm allocation (SLURM_JOB_ID is unset):" \
        "submit with sbatch, or run inside salloc"
    command -v srun >/dev/null || sr_die "srun not found on PATH"
    command -v "$SR_PYTHON" >/dev/null || sr_die "python '$SR_PYTHON' not found (use --python)"
    mapfile -t SR_NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
    [ ${#SR_NODES[@]} -gt 0 ] || sr_die "no nodes in SLURM_JOB_NODELIST='$SLURM_JOB_NODELIST'"
    SR_HEAD=${SR_NODES[0]}
    # A batch script runs on one of the nodes: make that node the head, so the program (the Ray
    # driver, which must run on a Ray node) can run right here.
    local n
    for n in "${SR_NODES[@]}"; do [ "$n" != "${SLURMD_NODENAME:-}" ] || SR_HEAD=$n; done
    SR_WORKERS=()
    for n in "${SR_NODES[@]}"; do [ "$n" = "$SR_HEAD" ] || SR_WORKERS+=("$n"); done

    : "${SR_TEMP_DIR:=/tmp/sharded-ray-$SLURM_JOB_ID}"
    : "${SR_LOG_DIR:=${SLURM_SUBMIT_DIR:-$PWD}/sharded-ray-$SLURM_JOB_ID-logs}"
    sr_private_dir "$SR_LOG_DIR"
    # Every step, and the program, must import cluster/ (and sharded/ from a checkout).
    export PYTHONPATH="$SHARDED_ROOT${PYTHONPATH:+:$PYTHONPATH}"
    if [ "$SR_AUTH" = 1 ] && [ -z "${RAY_AUTH_MODE:-}" ]; then
        # srun exports the environment to every step, so all nodes and the program share it;
        # the token never touches a file.
        RAY_AUTH_TOKEN=$("$SR_PYTHON" -c 'import secrets; print(secrets.token_hex(32))')
        export RAY_AUTH_MODE=token RAY_AUTH_TOKEN
    elif [ "$SR_AUTH" = 0 ]; then
        # Explicitly off for every node and the program (a stale ~/.ray/auth_token would
        # otherwise turn it on for some processes only).
        export RAY_AUTH_MODE=disabled
        unset RAY_AUTH_TOKEN RAY_AUTH_TOKEN_PATH
    fi

    # --overlap: Ray steps run for the whole job and must not block other steps (the program,
    # the user's own srun calls) from the same CPUs.
    SR_STEP=(srun --nodes=1 --ntasks=1 --overlap)
    local node_opts=("${SR_RAY_ARGS[@]}")
    if [ -n "$SR_NUM_CPUS" ]; then
        SR_STEP+=(--cpus-per-task="$SR_NUM_CPUS")
        node_opts+=(--num-cpus "$SR_NUM_CPUS")
    fi
    [ -z "$SR_NUM_GPUS" ] || node_opts+=(--num-gpus "$SR_NUM_GPUS")
    [ -z "$SR_OBJECT_STORE_MEMORY" ] || node_opts+=(--object-store-memory "$SR_OBJECT_STORE_MEMORY")
    local ip_opts=()
    [ -z "$SR_INTERFACE" ] || ip_opts=(--interface "$SR_INTERFACE")
    local head_opts=(--port "$SR_PORT")
    # The helpers refuse to start without a token unless told so explicitly.
    [ "$SR_AUTH" = 1 ] || node_opts+=(--no-auth)
    [ "$SR_DASHBOARD" = 0 ] || head_opts+=(--dashboard)

    local head_ip
    head_ip=$("${SR_STEP[@]}" -w "$SR_HEAD" "$SR_PYTHON" -m cluster.ray_cluster node-ip \
        "${ip_opts[@]}" </dev/null) ||
        sr_die "could not determine the IP address of head node $SR_HEAD"
    export RAY_ADDRESS="$head_ip:$SR_PORT"

    sr_install_traps
    sr_log "starting Ray: head $SR_HEAD ($RAY_ADDRESS), ${#SR_WORKERS[@]} workers" \
        "${SR_WORKERS[*]}; logs in $SR_LOG_DIR"
    local log
    log=$(sr_new_log head "$SR_HEAD")
    # >> into the file mktemp just made (ours, in a directory nobody else may enter)
    "${SR_STEP[@]}" -w "$SR_HEAD" "$SR_PYTHON" -m cluster.ray_cluster head \
        --node-ip-address "$head_ip" "${head_opts[@]}" --temp-dir "$SR_TEMP_DIR/$SR_HEAD" \
        "${node_opts[@]}" \
        </dev/null >>"$log" 2>&1 &
    SR_PIDS+=($!)
    SR_ROLES+=("head $SR_HEAD")
    SR_LOGS+=("$log")
    # Workers start at once: the helper waits for the head's port itself (--connect-timeout).
    for n in "${SR_WORKERS[@]}"; do
        log=$(sr_new_log worker "$n")
        "${SR_STEP[@]}" -w "$n" "$SR_PYTHON" -m cluster.ray_cluster worker \
            --address "$RAY_ADDRESS" --connect-timeout "$SR_TIMEOUT" "${ip_opts[@]}" \
            --temp-dir "$SR_TEMP_DIR/$n" "${node_opts[@]}" \
            </dev/null >>"$log" 2>&1 &
        SR_PIDS+=($!)
        SR_ROLES+=("worker $n")
        SR_LOGS+=("$log")
    done
    sr_wait_nodes "${#SR_NODES[@]}"
    sr_log "Ray cluster up: ${#SR_NODES[@]} nodes, RAY_ADDRESS=$RAY_ADDRESS"
}

# Wait (on the head node, which surely reaches the GCS) until $1 nodes are alive; fail early
# with the node's log when one of the Ray steps dies first.
sr_wait_nodes() {
    "${SR_STEP[@]}" -w "$SR_HEAD" "$SR_PYTHON" -m cluster.ray_cluster wait \
        --address "$RAY_ADDRESS" --nodes "$1" --timeout "$SR_TIMEOUT" </dev/null >&2 &
    local waiter=$! i
    while kill -0 "$waiter" 2>/dev/null; do
        for i in "${!SR_PIDS[@]}"; do
            if ! kill -0 "${SR_PIDS[i]}" 2>/dev/null; then
                kill "$waiter" 2>/dev/null || true
                sr_log "Ray ${SR_ROLES[i]} exited before the cluster was up; its output:"
                tail -n 30 "${SR_LOGS[i]}" >&2 || true
                sr_die "Ray cluster failed to start (logs in $SR_LOG_DIR)"
            fi
        done
        sleep 0.5
    done
    wait "$waiter" || sr_die "Ray cluster did not come up: see above and the logs in $SR_LOG_DIR"
}

# Run "$@" as the Ray driver on the head node and return its exit status.  Background + wait
# so that a signal reaches the trap (and stops Ray) while the program runs.  (Every other step
# reads /dev/null: srun would otherwise pass this script's stdin to it.)
sr_run() {
    local cmd=("$@")
    [ "${SLURMD_NODENAME:-}" = "$SR_HEAD" ] || cmd=("${SR_STEP[@]}" -w "$SR_HEAD" "$@")
    "${cmd[@]}" &
    SR_PROG=$!
    local rc=0
    wait "$SR_PROG" || rc=$?
    SR_PROG=
    return $rc
}

# Stop every Ray node of this job: workers first, head last.  Safe to call twice.
sr_stop() {
    local pids=() i p alive
    for p in "${SR_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && pids+=("$p"); done
    SR_PIDS=()
    [ ${#pids[@]} -gt 0 ] || return 0
    sr_log "stopping Ray on ${#pids[@]} nodes"
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
    local deadline=$((SECONDS + SR_STOP_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 1 ] || break
        sleep 0.5
    done
    # A killed srun makes slurmd kill the whole step; leftovers on this node go by temp dir.
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    wait "${pids[@]}" 2>/dev/null || true
    "$SR_PYTHON" -m cluster.ray_cluster stop --temp-dir "$SR_TEMP_DIR" --timeout 5 \
        >/dev/null 2>&1 || true
    sr_log "Ray stopped"
}
