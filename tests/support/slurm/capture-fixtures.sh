#!/usr/bin/env bash
# capture-fixtures.sh DIR OUT: runs the jobs that tests/data/slurm/README.md
# describes on the cluster slurm-up.sh started in DIR (an idle one, freshly
# started: job ids from 1) and writes what Slurm's commands print to OUT.
# Takes about 2 minutes (a job has to reach its 1-minute time limit).
#
# Each capture NAME is stdout byte for byte; where the command wrote to
# stderr, NAME.stderr; where it exited non-zero, NAME.rc (the exit code).
# Files without ".local" ran with SLURM_TIME_FORMAT=%s (as the agent runs
# every command); NAME.local the same command with Slurm's default format.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DIR OUT" >&2
  exit 2
fi
DIR=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
# shellcheck disable=SC1091
source "$DIR/env.sh"
unset SLURM_TIME_FORMAT
WORK=$DIR/capture
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"

SQ='%i|%T|%r|%S|%M|%N|%P|%Q'
SA='JobID,State,ExitCode,Start,End,NodeList'
SI='%R|%a|%N|%c|%m|%G|%l|%D'

log() { echo "[$(date +%T)] $*" >&2; }
# cap NAME COMMAND...: COMMAND with SLURM_TIME_FORMAT=%s.
cap() {
  local name=$1 rc=0; shift
  SLURM_TIME_FORMAT=%s "$@" >"$OUT/$name" 2>"$OUT/$name.stderr" || rc=$?
  [ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
  if [ $rc -ne 0 ]; then echo $rc >"$OUT/$name.rc"; else rm -f "$OUT/$name.rc"; fi
}
# capl NAME COMMAND...: cap, then the same command in Slurm's default time format into NAME.local.
capl() {
  local name=$1 rc=0; shift
  cap "$name" "$@"
  "$@" >"$OUT/$name.local" 2>/dev/null || true
}
submit() { sbatch --parsable "$@"; }
# The long state of each job (array tasks: one line each) while slurmctld still knows it.
state() { squeue -h -t all -j "$1" -o %T 2>/dev/null || true; }
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local secs=$1 what=$2 i; shift 2
  for ((i = 0; i < secs * 5; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  echo "capture-fixtures: timed out waiting for $what" >&2
  squeue -t all >&2
  exit 1
}
is_final() { # is_final ID...: every job (and array task) in a final state
  local id s
  for id in "$@"; do
    s=$(state "$id")
    [ -n "$s" ] || return 1
    if grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)$' <<<"$s"; then
      return 1
    fi
  done
}
is_state() { [ "$(state "$1")" = "$2" ]; }
# sacct has the end of every allocation row of these jobs (slurmdbd gets them a moment after slurmctld).
acct_final() {
  local ids=$1 n
  n=$(sacct -n -P -X -j "$ids" -o State 2>/dev/null | grep -cvE '^(PENDING|RUNNING|REQUEUED|SUSPENDED)$' || true)
  [ "$n" -ge "$2" ]
}

[ -z "$(squeue -h -t all -o %i)" ] || { echo "capture-fixtures: the cluster in $DIR is not idle" >&2; exit 1; }

log "static outputs"
cap version.txt sinfo --version
capl sinfo-idle.txt sinfo -h -o "$SI"

# ---- Jobs that end at once, on an idle cluster.
cat >oom.sh <<'SH'
#!/bin/bash
# Touches 500 MB (the job asks for 50 MB) and would then sleep.
python3 -c '
import time
b = bytearray(500 * 1024 * 1024)
for i in range(0, len(b), 4096):
    b[i] = 1
time.sleep(30)
'
SH
cat >twonode.sh <<'SH'
#!/bin/bash
srun hostname
srun -l bash -c 'echo node $SLURMD_NODENAME task $SLURM_PROCID'
SH
# sbatch's own output, once without --parsable (the agent uses --parsable).
cap sbatch.txt sbatch -J ok -o ok.out --wrap 'echo done'
OK=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$OUT/sbatch.txt")
EXIT3=$(submit -J exit3 -o exit3.out --wrap 'echo failing; exit 3')
SIG9=$(submit -J sig9 -o sig9.out --wrap 'kill -9 $$')
OOM=$(submit -J oom --mem=50M -o oom.out oom.sh)
TWO=$(submit -J twonode -N 2 -n 2 -o twonode.out twonode.sh)
log "phase 0: ok=$OK exit3=$EXIT3 sig9=$SIG9 oom=$OOM twonode=$TWO"
wait_for 60 "phase 0 jobs to end" is_final "$OK" "$EXIT3" "$SIG9" "$OOM" "$TWO"
# Before MinJobAge (10 s) makes slurmctld forget them.
capl scontrol-completed.txt scontrol -o show job "$OK"
capl scontrol-exit3.txt scontrol -o show job "$EXIT3"
capl scontrol-sig9.txt scontrol -o show job "$SIG9"
capl scontrol-oom.txt scontrol -o show job "$OOM"
capl scontrol-twonode.txt scontrol -o show job "$TWO"
capl squeue-all-finished.txt squeue -h -t all -o "$SQ"
capl squeue-empty.txt squeue -h -o "$SQ"
P0="$OK,$EXIT3,$SIG9,$OOM,$TWO"
wait_for 30 "sacct to have phase 0" acct_final "$P0" 5
capl sacct-finished.txt sacct -n -P -j "$P0" -o "$SA"

# ---- A busy cluster (4 CPUs): running, pending for several reasons, an array.
cat >loop.sh <<'SH'
#!/bin/bash
# Runs until its time limit (1 minute) ends it.
while true; do sleep 1; done
SH
TIMEOUT=$(submit -J timeout --time=1 -o timeout.out loop.sh)
RUN=$(submit -J running --time=10 --gres=gpu:1 -o running.out --wrap 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; sleep 600')
CANCEL=$(submit -J cancelme --time=10 -o cancelme.out --wrap 'sleep 600')
wait_for 30 "three jobs running" eval 'is_state $TIMEOUT RUNNING && is_state $RUN RUNNING && is_state $CANCEL RUNNING'
ARRAY=$(submit -J array --array=0-2 --time=2 -o array-%A_%a.out --wrap 'sleep 20')
BIG=$(submit -J big -n 4 --time=5 -o big.out --wrap 'sleep 5')
DEP=$(submit -J dep --time=5 --dependency=afterok:"$BIG" -o dep.out --wrap 'echo after big')
HELD=$(submit -J held --hold -o held.out --wrap 'echo held')
NOLIMIT=$(submit -J nolimit -o nolimit.out --wrap 'sleep 5')
log "phase 1: timeout=$TIMEOUT running=$RUN cancelme=$CANCEL array=$ARRAY big=$BIG dep=$DEP held=$HELD nolimit=$NOLIMIT"
# Backfill (every 5 s) gives the pending jobs their estimated start.
sleep 12
capl squeue-busy.txt squeue -h -o "$SQ"
cap squeue-busy-pending.txt squeue -h -t PD -o '%i|%Q'
capl sinfo-busy.txt sinfo -h -o "$SI"
capl scontrol-running.txt scontrol -o show job "$RUN"
capl scontrol-pending-dependency.txt scontrol -o show job "$DEP"
capl scontrol-array.txt scontrol -o show job "$ARRAY"
P1="$TIMEOUT,$RUN,$CANCEL,$ARRAY,$BIG,$DEP,$HELD,$NOLIMIT"
capl sacct-busy.txt sacct -n -P -j "$P1" -o "$SA"

log "cancelling $CANCEL while it runs"
scancel "$CANCEL"
wait_for 30 "cancelme to end" is_final "$CANCEL"
capl scontrol-cancelled.txt scontrol -o show job "$CANCEL"
capl squeue-after-cancel.txt squeue -h -o "$SQ"

log "waiting for $TIMEOUT to reach its time limit"
wait_for 150 "the time limit" is_final "$TIMEOUT"
capl scontrol-timeout.txt scontrol -o show job "$TIMEOUT"
capl squeue-later.txt squeue -h -o "$SQ"

log "cancelling what is left"
scancel "$RUN" "$BIG" "$DEP" "$HELD" "$NOLIMIT" "$ARRAY" 2>/dev/null || true
wait_for 60 "phase 1 to end" eval '[ -z "$(squeue -h -o %i)" ]'
wait_for 30 "sacct to have phase 1" acct_final "$P1" 10
capl sacct-busy-finished.txt sacct -n -P -j "$P1" -o "$SA"
capl sacct-all.txt sacct -n -P -j "$P0,$P1" -o "$SA"

# ---- Errors.
cap squeue-unknown-job.txt squeue -h -j 999999 -o "$SQ"
cap squeue-forgotten-job.txt squeue -h -j "$OK" -o "$SQ"
cap squeue-known-and-unknown.txt squeue -h -t all -j "$RUN,999999" -o "$SQ"
cap sacct-unknown-job.txt sacct -n -P -j 999999 -o "$SA"
cap scontrol-unknown-job.txt scontrol -o show job 999999
cap scancel-unknown-job.txt scancel 999999
cap sbatch-too-many-gpus.txt sbatch --parsable --gres=gpu:3 --wrap true
cap sbatch-unknown-partition.txt sbatch --parsable -p nosuch --wrap true
# slurmctld and slurmdbd not answering: the same slurm.conf with ports nothing listens on
# (squeue and sbatch retry for about 9 s first).
mkdir -p down
sed 's|^SlurmctldPort=.*|SlurmctldPort=1|; s|^AccountingStoragePort=.*|AccountingStoragePort=1|' "$SLURM_CONF" >down/slurm.conf
SLURM_CONF=$WORK/down/slurm.conf cap squeue-controller-down.txt squeue -h -o "$SQ"
SLURM_CONF=$WORK/down/slurm.conf cap sbatch-controller-down.txt sbatch --parsable --wrap true
SLURM_CONF=$WORK/down/slurm.conf cap sacct-slurmdbd-down.txt sacct -n -P -j "$OK" -o "$SA"
# sacct where the cluster keeps no accounting: the same cluster's slurm.conf with accounting_storage/none.
mkdir -p noacct
sed 's|^AccountingStorageType=.*|AccountingStorageType=accounting_storage/none|; /^AccountingStorage\(Host\|Port\|TRES\)=/d' \
  "$SLURM_CONF" >noacct/slurm.conf
SLURM_CONF=$WORK/noacct/slurm.conf cap sacct-no-accounting.txt sacct -n -P -j "$OK" -o "$SA"
# sinfo --version needs a configuration too (22.05 looks one up before it reads its options):
# without SLURM_CONF and /etc/slurm/slurm.conf it fails at once (a SLURM_CONF naming a
# missing file retries for 60 s first).
cap version-no-config.txt env -u SLURM_CONF sinfo --version

for f in ok exit3 sig9 oom twonode timeout running cancelme; do
  [ -f $f.out ] && cp $f.out "$OUT/job-$f.out"
done
log "done: $OUT"
