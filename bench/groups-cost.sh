#!/usr/bin/env bash
# Measures the consumer-group collector at 100k partitions: the exporter (cluster scope,
# --collector.consumer-groups) polls a 3-broker kfake serving 100 topics x 1000 partitions, RF 3,
# one record each, and 20 groups with committed offsets on 10k partitions each (every partition
# read by two groups), in ANOTHER process, so the exporter's CPU, peak RSS, refresh and scrape
# times are its own.
# Usage: bash bench/groups-cost.sh [refreshes]   (default 5; one every 10 s, REFRESH=… to change)
# BIN=path measures another build; FLAGS adds exporter flags (FLAGS=--collector.last-stable-offset);
# N_GROUPS, GROUP_PARTITIONS, TOPICS, PARTITIONS size the fake cluster; PRODUCE_EVERY=5s makes it write
# one more record to every partition that often (every HW moves: the HW history's worst case).
# MEMCG_LIMIT=300M runs the exporter in a memory cgroup with that hard limit (root and cgroup v1's memory
# controller at /sys/fs/cgroup/memory), as a container limit would: the exporter sets its soft memory limit
# from it (--auto-gomemlimit), and the script says whether the kernel had to reclaim or OOM-kill.
# KAFKA_EXPORTER=path measures danielqsj/kafka_exporter instead, on the same fake cluster: it reads
# Kafka when scraped, so only its scrapes (3, identity), series and peak RSS are reported.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
PORT=${PORT:-19745}
work=$(mktemp -d)
cg=/sys/fs/cgroup/memory/kafka_replication_exporter_groups_bench
trap 'kill $exp $fake 2>/dev/null || true; sleep 0.5; rmdir "$cg" 2>/dev/null; rm -rf "$work"' EXIT
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
go build -o "$work/kfake" ./e2e/cmd/kfake
"$work/kfake" --topics "${TOPICS:-100}" --partitions "${PARTITIONS:-1000}" --records 1 \
  --groups "${N_GROUPS:-20}" --group-partitions "${GROUP_PARTITIONS:-10000}" --produce-every "${PRODUCE_EVERY:-0}" >"$work/addrs" &
fake=$!
for _ in $(seq 1200); do [ -s "$work/addrs" ] && break; sleep 0.1; done
addr=$(cut -d, -f1 "$work/addrs")
if [ -n "${KAFKA_EXPORTER:-}" ]; then
  "$KAFKA_EXPORTER" --kafka.server="$addr" --kafka.version=3.9.0 --web.listen-address=127.0.0.1:$PORT >/dev/null 2>&1 &
  exp=$!
  for _ in $(seq 100); do curl -s -o /dev/null "127.0.0.1:$PORT/" && break; sleep 0.2; done
  t0=$(awk '{print $14 + $15}' /proc/$exp/stat)
  for _ in 1 2 3; do
    curl -s -o "$work/body" -w "full /metrics (identity): %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$PORT/metrics"
  done
  echo "kafka_exporter CPU per scrape: $(echo "scale=2; ($(awk '{print $14 + $15}' /proc/$exp/stat) - $t0) / $(getconf CLK_TCK) / 3" | bc) s"
  echo "series: $(grep -vc '^#' "$work/body"), of which per group and partition: $(grep -c '^kafka_consumergroup_[a-z_]*{[^}]*partition=' "$work/body" || true)"
  echo "kafka_exporter peak RSS including the scrapes: $(( $(awk '/VmHWM/ {print $2}' /proc/$exp/status) / 1024 )) MB"
  exit 0
fi
enter=""
if [ -n "${MEMCG_LIMIT:-}" ]; then
  rmdir "$cg" 2>/dev/null || true
  mkdir "$cg" && echo "$MEMCG_LIMIT" >"$cg/memory.limit_in_bytes"
  enter="echo \$\$ >$cg/cgroup.procs;"
fi
# shellcheck disable=SC2086 # FLAGS is a list of flags
sh -c "$enter exec \"\$@\"" sh "$BIN" serve --kafka.server="$addr" --scope=cluster --kafka.refresh-interval="${REFRESH:-10s}" \
  --kafka.request-timeout=30s --web.listen-address=127.0.0.1:$PORT --web.disable-exporter-metrics \
  --collector.consumer-groups ${FLAGS:-} >"$work/exporter.log" 2>&1 &
exp=$!
small() { curl -s "127.0.0.1:$PORT/metrics?name[]=kafka_replication_up&name[]=kafka_replication_refresh_duration_seconds&name[]=kafka_replication_last_refresh_timestamp_seconds"; }
metric() { small | awk -v m="$1" '$1 == m {print $2}'; }
for _ in $(seq 600); do [ "$(metric kafka_replication_up)" = "1" ] && break; sleep 0.5; done
[ "$(metric kafka_replication_up)" = "1" ] || { echo "exporter never came up"; exit 1; }
ticks() { awk '{print $14 + $15}' /proc/$exp/stat; }
t0=$(ticks); s0=$(date +%s.%N); last=$(metric kafka_replication_last_refresh_timestamp_seconds)
durations=""
for i in $(seq "$N"); do
  while [ "$(metric kafka_replication_last_refresh_timestamp_seconds)" = "$last" ]; do
    kill -0 $exp 2>/dev/null || { echo "the exporter died: $(grep oom_kill "$cg/memory.oom_control" 2>/dev/null)"; exit 1; }
    sleep 0.2
  done
  last=$(metric kafka_replication_last_refresh_timestamp_seconds)
  durations="$durations $(metric kafka_replication_refresh_duration_seconds)"
done
t1=$(ticks); s1=$(date +%s.%N)
echo "refresh duration (s), $N refreshes:$durations"
echo "exporter CPU while refreshing every ${REFRESH:-10s} (no scrapes): $(echo "scale=1; 100 * ($t1 - $t0) / $(getconf CLK_TCK) / ($s1 - $s0)" | bc)% of a core"
echo "exporter peak RSS before any full scrape: $(( $(awk '/VmHWM/ {print $2}' /proc/$exp/status) / 1024 )) MB"
for enc in identity gzip; do
  for _ in 1 2 3; do
    curl -s -o /dev/null -H "Accept-Encoding: $enc" -w "full /metrics ($enc): %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$PORT/metrics"
  done
done
curl -s "127.0.0.1:$PORT/metrics" >"$work/body"
echo "series: $(grep -vc '^#' "$work/body"), of which per group and partition: $(grep -c '^kafka_replication_consumer_group_[a-z_]*{[^}]*partition=' "$work/body" || true)"
echo "exporter peak RSS including the scrapes: $(( $(awk '/VmHWM/ {print $2}' /proc/$exp/status) / 1024 )) MB"
if [ -n "${MEMCG_LIMIT:-}" ]; then
  echo "memory cgroup limit $MEMCG_LIMIT: $(grep -o 'soft memory limit.*' "$work/exporter.log" || echo 'no soft limit logged');" \
    "limit hit $(cat "$cg/memory.failcnt") times; $(grep oom_kill "$cg/memory.oom_control" | tr '\n' ' ')"
fi
