#!/usr/bin/env bash
# slurm-down.sh DIR: stops the cluster that slurm-up.sh started in DIR:
# its jobs cancelled, then slurmd, slurmctld, slurmdbd, MariaDB and the
# munged it started (never one it found running). Leaves no process of it
# behind (SIGKILL after 10 s). Removes DIR/env.sh and the database, keeps
# the logs, configuration and state (slurm-up.sh wipes them).
set -uo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
[ -d "$1" ] || exit 0
DIR=$(cd "$1" && pwd)
export SLURM_CONF=$DIR/etc/slurm.conf
export PATH=/usr/sbin:$PATH

pidof_() { [ -s "$DIR/run/$1.pid" ] && cat "$DIR/run/$1.pid"; }
alive() { local p; p=$(pidof_ "$1") && kill -0 "$p" 2>/dev/null; }

# Jobs first, while slurmctld and the slurmd can still end them.
if alive slurmctld && [ -f "$SLURM_CONF" ]; then
  ids=$(timeout 5 squeue -h -o %A 2>/dev/null)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086
    timeout 5 scancel $ids 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null | head -1)" ] && break # COMPLETING included
      sleep 0.1
    done
  fi
fi

# slurmstepd of this cluster (jobs a slurmd was not able to end): each has
# its socket in DIR/spool (/proc/net/unix names it, the socket's inode leads to the pid).
stepds() {
  local inodes pid
  inodes=$(awk -v d="$DIR/spool/" 'index($8, d) == 1 {print $7}' /proc/net/unix 2>/dev/null | sort -u)
  [ -n "$inodes" ] || return 0
  for pid in $(pgrep -x slurmstepd); do
    for fd in "/proc/$pid/fd/"*; do
      case $(readlink "$fd" 2>/dev/null) in
        socket:\[*\]) grep -qx "$(readlink "$fd" | tr -dc 0-9)" <<<"$inodes" && { echo "$pid"; break; } ;;
      esac
    done
  done
}

stop() { # stop NAME...: SIGTERM, then SIGKILL after 10 s; the whole session each started.
  local name pid pids=()
  for name in "$@"; do
    pid=$(pidof_ "$name") || continue
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "slurm-down: pid $pid did not end on SIGTERM, killing it" >&2
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
    fi
  done
}

# tree PID...: the PIDs and all their descendants.
tree() {
  local all=" $* " grew=1 pid ppid
  while [ $grew -eq 1 ]; do
    grew=0
    while read -r pid ppid; do
      case $all in *" $ppid "*) case $all in *" $pid "*) ;; *) all+="$pid "; grew=1 ;; esac ;; esac
    done < <(ps -e -o pid=,ppid=)
  done
  echo $all # one line of pids
}

# What is left of this cluster's jobs once slurmd are gone is SIGKILLed with
# its slurmstepd (the job's processes first: they would outlive it).
left=$(stepds)
# shellcheck disable=SC2086
[ -n "$left" ] && left=$(tree $left)
# slurmctld with the slurmd (each takes ~2 s to end), then slurmdbd after
# slurmctld (which sends it the last job records), with MariaDB and munged.
stop slurmd-n1 slurmd-n2 slurmctld
# shellcheck disable=SC2086
[ -n "$left" ] && kill -KILL $left 2>/dev/null
stop slurmdbd mariadbd munged
# MariaDB's datadir is ~150 MB and of no use once slurmdbd is gone.
alive mariadbd || rm -rf "$DIR/mysql"
rm -f "$DIR"/run/*.pid
# The job cgroups the cluster's slurmstepds leave behind (empty, but kept by
# the kernel: /sys/fs/cgroup/<controller>/slurm_n1/uid_0/job_1/...). The next
# cluster numbers its jobs from 1 again, and job 1's setup fails on a
# leftover job_1 (task_p_pre_setuid: the job is requeued and held). rmdir
# takes only empty ones, so a cgroup still in use is left alone.
for d in /sys/fs/cgroup/*/slurm_n1 /sys/fs/cgroup/*/slurm_n2; do
  [ -d "$d" ] && find "$d" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null || true
done
# env.sh is there exactly while a cluster is: a test that finds it may use it.
rm -f "$DIR/env.sh"
exit 0
