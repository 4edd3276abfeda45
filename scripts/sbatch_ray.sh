#!/bin/bash
# Run a program on a multi-node Ray cluster inside one Slurm batch job.
#
#   sbatch scripts/sbatch_ray.sh [OPTIONS] [--] PROGRAM [ARGS...]
#   bash scripts/sbatch_ray.sh --help
#
# Edit only the #SBATCH resource lines below (or override them on the sbatch command line,
# e.g. `sbatch -N 4 --gres=gpu:2 scripts/sbatch_ray.sh python train.py`).
#
#SBATCH --job-name=sharded-ray
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=sharded-ray-%j.out
##SBATCH --gres=gpu:1
##SBATCH --partition=YOUR_PARTITION
##SBATCH --mem=16G
#
# One Ray node per Slurm node: ntasks-per-node=1 and cpus-per-task = CPUs each Ray node offers.
# GPUs: remove one '#' from the --gres line; each node then offers the GPUs Slurm gave it.

set -euo pipefail

sbatch_ray_usage() {
    cat <<'EOF'
Usage: sbatch [SBATCH OPTIONS] scripts/sbatch_ray.sh [OPTIONS] [--] PROGRAM [ARGS...]

Start a Ray cluster on the nodes of this batch job (head on the node running the script, one
worker on each other node), wait until every node has registered, run PROGRAM there with
RAY_ADDRESS exported (so `st.init()` connects), then stop Ray on every node, also when the job
is cancelled or runs out of time.  The job's exit status is PROGRAM's.

Example:
  sbatch -N 2 --cpus-per-task=8 scripts/sbatch_ray.sh python -m cluster.smoke --min-nodes 2

Submit from the sharded checkout (or set SHARDED_ROOT): Slurm runs a copy of this script, so
the checkout is found through the submit directory.

EOF
    sr_common_usage
}

# Slurm runs a copy of this file from its spool directory, so look for the checkout (which holds
# cluster/slurm_ray.sh) next to this file, then where the job was submitted from.
sbatch_ray_root() {
    local d
    for d in "${SHARDED_ROOT:-}" "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null && pwd)" \
        "${SLURM_SUBMIT_DIR:-}" "$PWD"; do
        if [ -n "$d" ] && [ -f "$d/cluster/slurm_ray.sh" ]; then
            echo "$d"
            return 0
        fi
    done
    echo "sharded: error: cannot find the sharded checkout (cluster/slurm_ray.sh):" \
        "submit from it or set SHARDED_ROOT" >&2
    return 1
}

SHARDED_ROOT=$(sbatch_ray_root)
export SHARDED_ROOT
# shellcheck source=../cluster/slurm_ray.sh
source "$SHARDED_ROOT/cluster/slurm_ray.sh"

while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) sbatch_ray_usage; exit 0 ;;
    --) shift; break ;;
    -*) sr_parse_option "$@" || sr_die "unknown option $1 (see --help)"; shift "$SR_SHIFT" ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || sr_die "no program given (see --help)"

sr_start
status=0
sr_run "$@" || status=$?
sr_log "program exited with status $status"
exit "$status"
