#!/usr/bin/env bash
# check-cluster.sh ENV: the slurm_cluster fixture works as the tests expect:
# two idle nodes with 2 GPUs each, a GPU job that sees CUDA_VISIBLE_DEVICES,
# a two-node job whose srun steps sacct lists, exit codes, and a job over its
# --mem ending as env.sh's SLURM_UP_MEMORY says. Exit 77 without the cluster.
set -euo pipefail
ENV=$1
if [ ! -f "$ENV" ]; then
  echo "SKIP: no $ENV (slurm_cluster_up was skipped: not root, or no Slurm)"
  exit 77
fi
# shellcheck disable=SC1090
source "$ENV"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() {
  echo "FAIL: $*"
  squeue
  sinfo -N
  exit 1
}
expect() { # expect WHAT ACTUAL EXPECTED
  [ "$2" = "$3" ] || fail "$1: got [$2], expected [$3]"
  echo "ok: $1"
}
# acct ID: the allocation's "State|ExitCode" once slurmdbd has its end (it gets it just after slurmctld).
acct() {
  local row
  for _ in $(seq 50); do
    row=$(sacct -n -P -X -j "$1" -o State,ExitCode 2>/dev/null | head -1)
    case $row in "" | PENDING* | RUNNING* | COMPLETING*) sleep 0.2 ;; *) echo "$row"; return ;; esac
  done
  echo "$row"
}

expect "partitions" "$(sinfo -h -o '%R|%a|%D|%c|%G|%l')" "debug|up|2|2|gpu:2|infinite
gpu|up|1|2|gpu:2|2-00:00:00"
expect "nodes idle" "$(sinfo -h -N -p debug -o '%N %T')" "n1 idle
n2 idle"

id=$(sbatch --parsable --wait --gres=gpu:1 -o gpu.out --wrap 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES')
expect "GPU job's device" "$(cat gpu.out)" "CUDA_VISIBLE_DEVICES=0"
expect "GPU job in sacct" "$(acct "$id")" "COMPLETED|0:0"

# stderr apart: srun may say "Job N step creation temporarily disabled, retrying (Requested nodes
# are busy)" while the previous step's resources are being released.
id=$(sbatch --parsable --wait -N 2 -n 2 -o two.out -e two.err --wrap 'srun hostname >/dev/null; srun -l printenv SLURMD_NODENAME | sort')
expect "two-node job's tasks" "$(cat two.out)" "0: n1
1: n2"
acct "$id" >/dev/null
expect "two-node job's rows" "$(sacct -n -P -j "$id" -o JobID,State,NodeList)" "$id|COMPLETED|n[1-2]
$id.batch|COMPLETED|n1
$id.extern|COMPLETED|n[1-2]
$id.0|COMPLETED|n[1-2]
$id.1|COMPLETED|n[1-2]"

rc=0
id=$(sbatch --parsable --wait -o exit3.out --wrap 'exit 3') || rc=$?
expect "sbatch --wait's exit code" "$rc" 3
expect "failed job in sacct" "$(acct "$id")" "FAILED|3:0"

rc=0
id=$(sbatch --parsable --wait --mem=50M -o oom.out \
  --wrap 'python3 -c "b = bytearray(300 << 20); import time; time.sleep(20)"') || rc=$?
case ${SLURM_UP_MEMORY:-} in
  cgroup) expect "job over its memory" "$(acct "$id")" "OUT_OF_MEMORY|0:125" ;;
  jobacct) expect "job over its memory" "$(acct "$id")" "FAILED|0:9" ;;
  *) fail "env.sh has no SLURM_UP_MEMORY" ;;
esac
echo "all ok"
