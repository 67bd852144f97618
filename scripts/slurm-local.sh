#!/usr/bin/env bash
# A one-node Slurm on this machine, for comparing the CLI's cost with `sbatch` (bench/cli_bench.cc,
# docs/cli.md "Start cost"): scripts/slurm-local.sh start|stop|status|install
#
#   install  apt-get installs slurmctld, slurmd, slurm-client and munge (Debian packages)
#   start    writes DIR/slurm.conf (one node: this host, its cores, partition "debug"), starts
#            munged (when not running), slurmctld and slurmd as root, waits for `scontrol ping`,
#            and prints the line to export: SLURM_CONF=DIR/slurm.conf
#   stop     stops the slurmd and slurmctld it started (munged is left running)
# DIR is $ABACUS_SLURM_DIR (default /tmp/abacus-slurm). The ports are 16817/16818; no accounting
# database, jobs run `true` and write nothing. Slurm's daemons listen on every address of the
# host (Slurm has no loopback-only setting); the bench talks to them over 127.0.0.1 only.
set -euo pipefail

DIR="${ABACUS_SLURM_DIR:-/tmp/abacus-slurm}"
CONF="$DIR/slurm.conf"

start() {
  for b in slurmctld slurmd munged scontrol sbatch; do
    command -v "$b" >/dev/null 2>&1 || { echo "slurm-local: $b is not installed (run: $0 install)" >&2; exit 1; }
  done
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
  cat >"$CONF" <<CONF
ClusterName=abacusbench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MaxJobCount=1000000
MinJobAge=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
    su -s /bin/sh munge -c /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
  fi
  stop quiet
  SLURM_CONF="$CONF" slurmctld -f "$CONF"
  SLURM_CONF="$CONF" slurmd -f "$CONF"
  for _ in $(seq 50); do
    if SLURM_CONF="$CONF" scontrol ping >/dev/null 2>&1 &&
       SLURM_CONF="$CONF" sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "SLURM_CONF=$CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm-local: the controller did not come up; see $DIR/log/" >&2
  exit 1
}

stop() {
  for d in slurmd slurmctld; do
    if [ -f "$DIR/$d.pid" ]; then
      kill "$(cat "$DIR/$d.pid")" 2>/dev/null || true
      rm -f "$DIR/$d.pid"
    fi
  done
  pkill -f "slurm(ctld|d) -f $CONF" 2>/dev/null || true
  [ "${1:-}" = quiet ] || echo "slurm-local: stopped"
}

case "${1:-}" in
  install) DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge ;;
  start) start ;;
  stop) stop ;;
  status) SLURM_CONF="$CONF" scontrol ping ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
