#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for the cluster test (test/cluster/slurm.test.ts) and for
# trying `floatscope slurm` without a cluster. Needs root (slurmd launches jobs) and Debian's
# slurm-wlm + munge packages (installed here when missing and apt-get is available).
#
#   bash scripts/slurm-local.sh install   # apt-get install slurm-wlm munge (root, when missing)
#   bash scripts/slurm-local.sh start     # munged, slurmctld, slurmd; prints SLURM_CONF=…
#   bash scripts/slurm-local.sh stop      # stops the daemons this script started
#   bash scripts/slurm-local.sh status
#
# Everything lives under $FLOATSCOPE_SLURM_DIR (default .cache/slurm-local): its own munge key and
# socket, its own ports ($FLOATSCOPE_SLURM_PORT, default 16817, and the next one), logs, state. It
# never touches /etc/slurm, /etc/munge or a system munged. Exit codes: 0 ok; 3 cannot run here
# (not root, packages missing): callers treat 3 as "skip, and say so".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${FLOATSCOPE_SLURM_DIR:-$ROOT/.cache/slurm-local}"
PORT="${FLOATSCOPE_SLURM_PORT:-16817}"
CONF="$DIR/slurm.conf"
SOCK="$DIR/munge/munge.socket"
say() { echo "[slurm-local] $*" >&2; }
cannot() { say "CANNOT RUN: $*"; exit 3; }

have_packages() { command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && command -v sbatch >/dev/null; }

install() {
  have_packages && return 0
  [[ "$(id -u)" == 0 ]] || cannot "slurm-wlm/munge are not installed and this is not root (apt-get install slurm-wlm munge)"
  command -v apt-get >/dev/null || cannot "slurm-wlm/munge are not installed and there is no apt-get"
  say "installing slurm-wlm and munge (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
  have_packages || cannot "apt-get did not provide slurmctld/slurmd/munged/sbatch"
}

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  # Only the daemons whose pid files are ours, by pid; slurmd first (it may be running jobs).
  for name in slurmd slurmctld munged; do
    local pidf="$DIR/$name.pid"
    if alive "$pidf"; then
      local pid; pid="$(cat "$pidf")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
      say "stopped $name ($pid)"
    fi
    rm -f "$pidf"
  done
}

start() {
  [[ "$(id -u)" == 0 ]] || cannot "slurmd must run as root to launch jobs (this is uid $(id -u))"
  have_packages || install
  stop
  rm -rf "$DIR/state" "$DIR/spool"
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 0700 "$DIR/munge"
  [[ -f "$DIR/munge/munge.key" ]] || mungekey --create --keyfile="$DIR/munge/munge.key" >&2
  chmod 0600 "$DIR/munge/munge.key"
  munged --key-file="$DIR/munge/munge.key" --socket="$SOCK" --pid-file="$DIR/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" --force >&2 \
    || cannot "munged did not start (see $DIR/log/munged.log)"
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem="$(awk '/MemTotal/ {printf "%d", $2 / 1024 / 2}' /proc/meminfo)"
  cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster on localhost.
ClusterName=floatscope-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  slurmctld -f "$CONF" >&2 || cannot "slurmctld did not start (see $DIR/log/slurmctld.log)"
  slurmd -f "$CONF" >&2 || cannot "slurmd did not start (see $DIR/log/slurmd.log)"
  export SLURM_CONF="$CONF"
  for _ in $(seq 150); do
    state="$(sinfo -h -o %T 2>/dev/null | head -1 || true)"
    [[ "$state" == idle* || "$state" == mixed* ]] && break
    sleep 0.2
  done
  if [[ "$state" != idle* && "$state" != mixed* ]]; then
    say "node did not become idle (state: ${state:-none}); last log lines:"
    tail -5 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
    stop
    cannot "the local cluster did not come up"
  fi
  say "up: node $host ($cpus CPUs), ports $PORT/$((PORT + 1)), $DIR"
  echo "SLURM_CONF=$CONF"
}

status() {
  for name in munged slurmctld slurmd; do
    if alive "$DIR/$name.pid"; then echo "$name: running ($(cat "$DIR/$name.pid"))"; else echo "$name: not running"; fi
  done
  [[ -f "$CONF" ]] && SLURM_CONF="$CONF" sinfo 2>/dev/null || true
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
