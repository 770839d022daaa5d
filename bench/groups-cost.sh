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
# shellcheck source=bench/exporter-cost.sh
. bench/exporter-cost.sh
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
  echo "kafka_exporter peak RSS including the scrapes: $(peak_rss)"
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
wait_up
measure_refreshes "$N" "${REFRESH:-10s}"
measure_scrapes "$work/body"
echo "series: $(grep -vc '^#' "$work/body"), of which per group and partition: $(grep -c '^kafka_replication_consumer_group_[a-z_]*{[^}]*partition=' "$work/body" || true)"
echo "exporter peak RSS including the scrapes: $(peak_rss)"
if [ -n "${MEMCG_LIMIT:-}" ]; then
  echo "memory cgroup limit $MEMCG_LIMIT: $(grep -o 'soft memory limit.*' "$work/exporter.log" || echo 'no soft limit logged');" \
    "limit hit $(cat "$cg/memory.failcnt") times; $(grep oom_kill "$cg/memory.oom_control" | tr '\n' ' ')"
fi
