#!/bin/sh
# feroce sweep on a real single-node Slurm cluster: installs Debian's slurm-wlm and munge when
# missing (as root), writes its own slurm.conf and munge key in a temporary directory, starts
# munged, slurmctld and slurmd itself on private ports and sockets, submits a 6-point campaign
# as a job array, waits, collects (twice: idempotent) and compares with the local run. Every
# daemon it started is stopped on exit. Exits 77 (skip) with a message where the daemons cannot
# be installed or slurmd cannot start (containers without the privileges it needs).
set -eu
FEROCE=$(realpath "$1")
say() { echo "sweep_slurm: $*"; }
skip() { say "SKIP: $*"; exit 77; }
fail() { say "FAIL: $*" >&2; exit 1; }

missing=""
for b in munged slurmctld slurmd sbatch sinfo; do
  command -v "$b" >/dev/null 2>&1 || missing=1
done
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || skip "slurm-wlm and munge are not installed (run as root to let the test install them)"
  say "installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge </dev/null >/dev/null 2>&1 || skip "apt-get could not install slurm-wlm and munge"
fi
command -v sqlite3 >/dev/null || skip "needs the sqlite3 program"
[ "$(id -u)" = 0 ] || skip "starting slurmd needs root here"

T=$(mktemp -d /tmp/feroce-sweep-slurm-XXXXXX)
chmod 755 "$T"
PIDS=""
cleanup() {
  if [ -n "$PIDS" ]; then
    SLURM_CONF=$T/slurm.conf timeout 10 scancel --quiet -u root >/dev/null 2>&1 || true
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      alive=""
      for p in $PIDS; do kill -0 "$p" 2>/dev/null && alive=1; done
      [ -z "$alive" ] && break
      sleep 0.5
    done
    for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
  fi
  rm -rf "$T"
}
trap cleanup EXIT INT TERM

# ---- munge, on its own socket ----
mkdir -p "$T/munge" "$T/state" "$T/spool"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
SOCK=$T/munge/munge.socket
munged -F --force --key-file="$T/munge/munge.key" --socket="$SOCK" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" >/dev/null 2>&1 &
PIDS="$!"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || skip "munged did not start: $(tail -3 "$T/munge/munged.log" 2>/dev/null)"

# ---- slurm.conf: this host as the only node, private ports ----
HOST=$(hostname -s)
BASE=$((20000 + $$ % 20000))
cat >"$T/slurm.conf" <<EOF
ClusterName=feroce-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$BASE
SlurmdPort=$((BASE + 1))
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=feroce Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -c -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D -N "$HOST" -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
SLURMD=$!
PIDS="$PIDS $SLURMD"
state=""
for _ in $(seq 1 60); do
  kill -0 "$SLURMD" 2>/dev/null || skip "slurmd cannot start here: $(tail -3 "$T/slurmd.out" "$T/slurmd.log" 2>/dev/null | tr '\n' ' ')"
  state=$(timeout 5 sinfo -h -N -o %T 2>/dev/null | head -1 || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || skip "the node did not become idle (state '$state'): $(tail -3 "$T/slurmd.log" 2>/dev/null | tr '\n' ' ')"
say "cluster up: node $HOST idle"

# ---- the campaign: locally, then on the cluster ----
mkdir -p "$T/camp"
cat >"$T/camp/c.yaml" <<'EOF'
scenario: incast3
set: {flow.size: 4MB}
grid:
  link.delay: [1us, 2us, 4us]
  host.mtu: [1024, 4096]
seeds: 1
EOF
"$FEROCE" sweep run "$T/camp/c.yaml" --db "$T/camp/local.db" -j 2 --no-progress >/dev/null || fail "local run"
timeout 180 "$FEROCE" sweep run "$T/camp/c.yaml" --db "$T/camp/cluster.db" --slurm \
  --partition feroce --array-max 3 --wait >"$T/submit.out" 2>&1 || {
  cat "$T/submit.out" "$T"/camp/cluster.results/logs/* 2>/dev/null | tail -20
  fail "the Slurm run"
}
grep -q "6 points as 3 array tasks" "$T/submit.out" || fail "submission: $(cat "$T/submit.out")"
ls "$T"/camp/cluster.results/*.res | wc -l | grep -qx 6 || fail "6 result files"
"$FEROCE" sweep collect "$T/camp/c.yaml" --db "$T/camp/cluster.db" | grep -q "0 new points" ||
  fail "a second collect added points"
dump() {
  cols=$(sqlite3 "$1" "SELECT group_concat('\"' || name || '\"') FROM pragma_table_info('runs') WHERE name NOT IN ('wall_s', 'cpu_s')")
  sqlite3 "$1" "SELECT $cols FROM runs ORDER BY id; SELECT * FROM flows ORDER BY run_id, flow"
}
dump "$T/camp/local.db" >"$T/local.txt"
dump "$T/camp/cluster.db" >"$T/cluster.txt"
[ "$(sqlite3 "$T/camp/cluster.db" "SELECT count(*) FROM runs WHERE status = 'ok'")" = 6 ] || fail "6 ok runs"
cmp -s "$T/local.txt" "$T/cluster.txt" || fail "the cluster's results differ from the local run's"
say "ok: 6 points as a 3-task job array, collected twice, equal to the local run"
