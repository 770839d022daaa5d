#!/usr/bin/env bash
# Catches up the backlog bench/catchup-cost.sh generated (WORK=dir) inside a memory cgroup limited like the shipped
# pod (deploy/kubernetes/pod.yaml: 128Mi), and says whether the exporter reached /-/ready or was OOM-killed.
# Needs root and the cgroup v1 memory controller at /sys/fs/cgroup/memory (cgroup v2: adapt the two paths).
# Usage: WORK=dir [BIN=path] bash bench/catchup-memcg.sh
set -uo pipefail
cd "$(dirname "$0")/.."
: "${WORK:?set WORK to the directory bench/catchup-cost.sh generated its files in}"
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
cg=/sys/fs/cgroup/memory/kafka_replication_exporter_bench
rmdir "$cg" 2>/dev/null
mkdir -p "$cg" && echo $((128 * 1024 * 1024)) >"$cg/memory.limit_in_bytes" || exit 1
trap 'rmdir "$cg" 2>/dev/null; rm -f "$WORK/memcg-positions.json"' EXIT
args=()
for name in server state-change controller; do args+=("--log.file=$WORK/$name.log"); done
s0=$(date +%s.%N)
sh -c "echo \$\$ >$cg/cgroup.procs; exec $BIN serve ${args[*]} --log.from-beginning --log.position-file=$WORK/memcg-positions.json --web.listen-address=127.0.0.1:19744 --web.disable-exporter-metrics" >/dev/null 2>&1 &
pid=$!
while :; do
	if ! kill -0 $pid 2>/dev/null; then wait $pid; outcome="exited with status $?"; break; fi
	[ "$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:19744/-/ready)" = 200 ] && { outcome="ready"; break; }
	sleep 1
done
secs=$(echo "$(date +%s.%N) - $s0" | bc)
hwm=$(awk '/VmHWM/ {print int($2 / 1024) " MB"}' /proc/$pid/status 2>/dev/null)
echo "$outcome after $(printf %.1f "$secs") s; peak RSS ${hwm:-n/a}; $(grep oom_kill "$cg/memory.oom_control" | tr '\n' ' ')"
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
