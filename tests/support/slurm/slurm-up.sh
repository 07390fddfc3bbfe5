#!/usr/bin/env bash
# slurm-up.sh DIR: a real single-host Slurm cluster for the tests (issue #26),
# everything under DIR: slurm.conf, state, spools, logs, a MariaDB for
# slurmdbd (so sacct is real), and DIR/env.sh for the clients.
#
#   slurmctld + slurmdbd + two slurmd (nodes n1 and n2 on this host, each
#   2 CPUs and 2 stand-in GPUs), partitions "debug" (default) and "gpu",
#   MinJobAge=10. README.md says what a test can expect of it.
#
# Ports are not Slurm's defaults (6817-6819) so the cluster never meets a
# developer's own one: SLURM_UP_PORT_BASE (default 16817) is slurmctld,
# +1 slurmd n1, +2 slurmdbd, +3 slurmd n2, +4 MariaDB (127.0.0.1 only).
# A munged that already answers is used; else one is started on munge's
# default socket (below: why) and slurm-down.sh stops it.
#
# Running it again stops the cluster in DIR and starts a clean one (job ids
# from 1, an empty accounting database). Needs root. On failure it prints
# the logs' tails, stops what it started and exits 1; exit 77 where it
# cannot run here (not root, Slurm or MariaDB missing).
set -Eeuo pipefail # -E: the ERR trap (fail, below) in functions too

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd runs jobs as their users)"
for p in slurmctld slurmd slurmdbd munged mariadbd; do
  command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || skip "$p is missing (scripts/install-deps.sh installs it)"
done
for p in sbatch squeue sacct sacctmgr sinfo scontrol munge unmunge mariadb mariadb-install-db; do
  command -v "$p" >/dev/null || skip "$p is missing (scripts/install-deps.sh installs it)"
done
export PATH=/usr/sbin:$PATH

HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
case "$DIR" in /|/usr|/usr/*|/etc|/etc/*|/var|/root|/home) echo "refusing DIR=$DIR" >&2; exit 2 ;; esac

START=${EPOCHREALTIME/[.,]/}
# say MESSAGE: MESSAGE after the seconds since the start ("[  3.2s] slurmdbd up").
say() {
  local ms=$(( (${EPOCHREALTIME/[.,]/} - START) / 1000 ))
  printf '[%3d.%ds] %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"
}
BASE_PORT=${SLURM_UP_PORT_BASE:-16817}
CTLD_PORT=$BASE_PORT
N1_PORT=$((BASE_PORT + 1))
DBD_PORT=$((BASE_PORT + 2))
N2_PORT=$((BASE_PORT + 3))
DB_PORT=$((BASE_PORT + 4))
H=$(hostname -s)

# A clean start: whatever ran in DIR before is stopped and its state removed.
"$HERE/slurm-down.sh" "$DIR" >/dev/null 2>&1 || true
rm -rf "${DIR:?}"/{etc,state,spool,log,run,mysql,munge,dev,env.sh}
mkdir -p "$DIR"/{etc,state,spool/n1,spool/n2,log,run}

# fail MESSAGE: the message and every log's tail on the original stderr (fd 3,
# also from inside a waitfor probe whose output is discarded), then stops
# what was started (unless SLURM_UP_KEEP_ON_FAILURE is set) and exits 1.
exec 3>&2
fail() {
  trap - ERR
  {
    echo "slurm-up: $*"
    for f in "$DIR"/log/*; do
      [ -s "$f" ] || continue
      echo "---- tail $f"
      grep -v -e 'mpi/pmix' -e 'MPI: Cannot create context' "$f" | tail -n 25
    done
  } >&3
  if [ -z "${SLURM_UP_KEEP_ON_FAILURE:-}" ]; then
    "$HERE/slurm-down.sh" "$DIR" >&3 2>&3 || true
  fi
  exit 1
}
trap 'fail "failed at line $LINENO: $BASH_COMMAND"' ERR

# waitfor SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s; fails at
# once where WHAT is a daemon that start() started and it has ended.
waitfor() {
  local secs=$1 what=$2; shift 2
  local i
  for ((i = 0; i < secs * 10; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ -s "$DIR/run/$what.pid" ] && ! alive "$what"; then
      fail "$what exited (see its log below)"
    fi
    sleep 0.1
  done
  fail "$what did not come up within ${secs}s"
}
# start NAME COMMAND...: a daemon in the foreground in its own session, its pid in DIR/run/NAME.pid.
start() {
  local name=$1; shift
  setsid "$@" </dev/null >"$DIR/log/$name.out" 2>&1 3>&- &
  echo $! >"$DIR/run/$name.pid"
}
alive() { kill -0 "$(cat "$DIR/run/$1.pid")" 2>/dev/null; }
# A port is taken when something accepts a connection on it (bash's /dev/tcp; ss only says who).
port_free() { ! (exec 2>/dev/null; : <"/dev/tcp/127.0.0.1/$1"); }

for p in $CTLD_PORT $N1_PORT $DBD_PORT $N2_PORT $DB_PORT; do
  if ! port_free "$p"; then
    command -v ss >/dev/null && ss -Hltnp "sport = :$p" >&3
    fail "port $p is taken (another cluster? SLURM_UP_PORT_BASE moves all five)"
  fi
done

# --- munge: reuse one that answers, else our own on a socket under DIR.
AUTHINFO=""
if [ -z "${SLURM_UP_OWN_MUNGE:-}" ] && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "munge: using the running munged"
else
  [ -s /etc/munge/munge.key ] || fail "no /etc/munge/munge.key (the munge package creates it)"
  install -d -o munge -g munge -m 0755 "$DIR/munge" # munged wants o+x on its socket directory
  # On munge's default socket where none answers there (a new machine: the
  # package's postinst starts no daemon without an init system): sacctmgr's
  # connection to slurmdbd ignores slurm.conf's AuthInfo and always uses the
  # default socket. A socket under DIR only with SLURM_UP_OWN_MUNGE (then
  # sacctmgr cannot reach slurmdbd).
  if [ -n "${SLURM_UP_OWN_MUNGE:-}" ]; then
    SOCK=$DIR/munge/munge.socket
    AUTHINFO="AuthInfo=socket=$SOCK"
  else
    install -d -o munge -g munge -m 0755 /run/munge
    SOCK=/run/munge/munge.socket.2
  fi
  start munged setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$SOCK" \
    --pid-file="$DIR/munge/munged.pid" --seed-file="$DIR/munge/munged.seed" --log-file="$DIR/log/munged.log"
  waitfor 10 munged sh -c "munge -S '$SOCK' -n | unmunge -S '$SOCK'"
  say "munge: started munged on $SOCK"
fi

# --- MariaDB for slurmdbd: its own datadir and socket, TCP on 127.0.0.1 only.
DBPASS=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$DIR/mysql"
mariadb-install-db --no-defaults --user=root --datadir="$DIR/mysql/data" \
  --auth-root-authentication-method=socket --skip-test-db >"$DIR/log/mariadb-install.out" 2>&1 \
  || fail "mariadb-install-db failed"
say "MariaDB: datadir made"
start mariadbd mariadbd --no-defaults --user=root --datadir="$DIR/mysql/data" \
  --socket="$DIR/mysql/mysqld.sock" --pid-file="$DIR/mysql/mysqld.pid" --port=$DB_PORT \
  --bind-address=127.0.0.1 --skip-name-resolve --log-error="$DIR/log/mariadbd.log" \
  --innodb-buffer-pool-size=128M --innodb-log-file-size=64M --innodb-lock-wait-timeout=900 \
  --max-allowed-packet=16M
waitfor 30 mariadbd mariadb --no-defaults -S "$DIR/mysql/mysqld.sock" -u root -e "SELECT 1"
mariadb --no-defaults -S "$DIR/mysql/mysqld.sock" -u root <<SQL
CREATE DATABASE slurm_acct_db;
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DBPASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL
say "MariaDB: up on 127.0.0.1:$DB_PORT"

# --- Configuration.
# Two slurmd on this host as nodes n1 and n2 (Debian's Slurm is built with
# multiple-slurmd support: each its own Port, and %n, the node name, in its
# spool, pid and log file). Each gets 2 CPUs and 4000 MB (less where the host
# has less), and 2 GPUs.
MEM=$(( $(free -m | awk '/^Mem:/{print $2}') / 2 - 512 ))
[ "$MEM" -gt 4000 ] && MEM=4000
# A job that does not say --mem gets 1000 MB per CPU (enough for Python with
# torch), less where two of them would not fit a node.
DEFMEM=$(( MEM / 2 ))
[ "$DEFMEM" -gt 1000 ] && DEFMEM=1000

# GPUs: gres/gpu drops a GPU without File= ("Removing file-less GPU" in
# slurmd's log, then the node is INVALID: "gres/gpu count reported lower
# than configured (0 < 2)"), and it wants a character device. Symlinks to
# /dev/null named nvidia0/1 pass that check and give the jobs real
# CUDA_VISIBLE_DEVICES (the index from the name); nothing else is touched.
mkdir -p "$DIR/dev"
ln -sfn /dev/null "$DIR/dev/nvidia0"
ln -sfn /dev/null "$DIR/dev/nvidia1"

# Memory enforcement. Where cgroup v1's memory controller can be used (a
# sub-cgroup can be made: Debian 12 in a container with cgroup v1 mounted,
# gVisor included), task/cgroup + ConstrainRAMSpace: a job over its --mem is
# killed by the kernel and ends OUT_OF_MEMORY (ExitCode 0:125). Else
# jobacct_gather/linux's OverMemoryKill: the step is killed at the next
# 1 s sample and the job ends FAILED 0:9, its .batch CANCELLED. env.sh
# says which (SLURM_UP_MEMORY=cgroup|jobacct).
MEMORY=jobacct
probe=/sys/fs/cgroup/memory/trainyard-slurm-probe-$$
if [ -z "${SLURM_UP_NO_CGROUP:-}" ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] \
    && [ -d /sys/fs/cgroup/freezer ] && mkdir "$probe" 2>/dev/null; then
  rmdir "$probe"
  MEMORY=cgroup
fi
if [ $MEMORY = cgroup ]; then
  TASK="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup"
  ACCT_PARAMS=""
  SWAP=no
  [ -f /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] && SWAP=yes
  cat >"$DIR/etc/cgroup.conf" <<CONF
# Written by tests/support/slurm/slurm-up.sh. The cgroups are
# /sys/fs/cgroup/<controller>/slurm_<node>/ (multiple-slurmd names them by node).
CgroupPlugin=cgroup/v1
ConstrainRAMSpace=yes
ConstrainSwapSpace=$SWAP
AllowedSwapSpace=0
CONF
else
  TASK="ProctrackType=proctrack/linuxproc
TaskPlugin=task/none"
  ACCT_PARAMS="JobAcctGatherParams=OverMemoryKill"
fi

cat >"$DIR/etc/slurm.conf" <<CONF
# Written by tests/support/slurm/slurm-up.sh
ClusterName=trainyard
SlurmctldHost=$H
SlurmctldPort=$CTLD_PORT
SlurmdPort=$N1_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
$AUTHINFO
MpiDefault=none
MailProg=/bin/true
$TASK
SchedulerType=sched/backfill
# Backfill every 5 s (default 30): pending jobs get their estimated start soon.
SchedulerParameters=bf_interval=5
# An .extern step in every job (sacct's NNN.extern rows), as clusters with pam_slurm_adopt have.
PrologFlags=Contain
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$DEFMEM
ReturnToService=2
MinJobAge=10
KillWait=5
# Accounting through slurmdbd, so sacct reports finished jobs.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$H
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none
# jobacct_gather/linux samples every second (sacct's MaxRSS; OverMemoryKill without cgroups).
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
$ACCT_PARAMS
GresTypes=gpu
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pidfile
SlurmdPidFile=$DIR/run/slurmd-%n.pidfile
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
NodeName=n1 NodeHostname=$H NodeAddr=127.0.0.1 Port=$N1_PORT CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=$MEM Gres=gpu:2 State=UNKNOWN
NodeName=n2 NodeHostname=$H NodeAddr=127.0.0.1 Port=$N2_PORT CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=$MEM Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
# A second partition with a time limit: sinfo shows two, and "2-00:00:00".
PartitionName=gpu Nodes=n2 MaxTime=2-00:00:00 State=UP
CONF
cat >"$DIR/etc/gres.conf" <<CONF
# Two stand-in GPUs per node (see slurm-up.sh): scheduled, accounted, CUDA_VISIBLE_DEVICES set.
NodeName=n[1-2] Name=gpu File=$DIR/dev/nvidia[0-1]
CONF
( umask 077
cat >"$DIR/etc/slurmdbd.conf" <<CONF
# Written by tests/support/slurm/slurm-up.sh (mode 600: it holds the database password)
AuthType=auth/munge
$AUTHINFO
DbdHost=$H
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$DIR/run/slurmdbd.pidfile
LogFile=$DIR/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DBPASS
StorageLoc=slurm_acct_db
CONF
)
chmod 600 "$DIR/etc/slurmdbd.conf"
cat >"$DIR/env.sh" <<ENV
# The clients of the test cluster in $DIR (tests/support/slurm/slurm-up.sh).
export SLURM_CONF=$DIR/etc/slurm.conf
# How a job over its --mem ends: cgroup -> OUT_OF_MEMORY, jobacct -> FAILED (0:9).
export SLURM_UP_MEMORY=$MEMORY
ENV
export SLURM_CONF=$DIR/etc/slurm.conf

# --- slurmdbd, then the cluster registered in it, then slurmctld and the slurmd.
start slurmdbd slurmdbd -D # reads slurmdbd.conf next to $SLURM_CONF
waitfor 30 slurmdbd sacctmgr -n show cluster
say "slurmdbd: up on port $DBD_PORT"
sacctmgr -n -P show cluster format=Cluster | grep -qx trainyard \
  || sacctmgr -i add cluster trainyard >"$DIR/log/sacctmgr.out" 2>&1 || fail "sacctmgr add cluster failed"
start slurmctld slurmctld -D -i
waitfor 20 slurmctld scontrol ping
say "slurmctld: up on port $CTLD_PORT"
start slurmd-n1 slurmd -D -N n1
start slurmd-n2 slurmd -D -N n2
# Both nodes idle; one that slurmctld set INVALID or DRAIN fails at once.
nodes_idle() {
  local states
  states=$(sinfo -h -N -o '%N %T' | sort -u | tr '\n' ' ')
  case $states in *inval* | *drain*) fail "a node is not usable: $states; $(sinfo -h -R -o '%N: %E')" ;; esac
  [ "$states" = "n1 idle n2 idle " ]
}
waitfor 30 "the nodes" nodes_idle

trap - ERR
say "slurmd: n1 and n2 idle (ports $N1_PORT, $N2_PORT; memory enforcement: $MEMORY)"
say "cluster \"trainyard\" up in $DIR: source $DIR/env.sh"
