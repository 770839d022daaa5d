#!/usr/bin/env bash
# Counts the series of one scrape per --collector.partition-series mode, cluster scope, every partition
# exported, against a 3-broker kfake of healthy partitions (RF 3) in another process: total series, series
# with a partition label, per partition, and the scrape's size.
# Usage: bash bench/series-count.sh [topics] [partitions per topic]   (default 10 x 1000)
# BIN=path measures another build; by default `make build`'s. MODES overrides "all unhealthy".
set -euo pipefail
cd "$(dirname "$0")/.."
TOPICS=${1:-10}
PARTS=${2:-1000}
PORT=${PORT:-19745}
MODES=${MODES:-all unhealthy}
work=$(mktemp -d)
exp=""
trap 'kill $exp $fake 2>/dev/null || true; rm -rf "$work"' EXIT
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
go build -o "$work/kfake" ./e2e/cmd/kfake
"$work/kfake" --topics "$TOPICS" --partitions "$PARTS" >"$work/addrs" &
fake=$!
for _ in $(seq 600); do [ -s "$work/addrs" ] && break; sleep 0.1; done
addr=$(cut -d, -f1 "$work/addrs")
n=$((TOPICS * PARTS))
for mode in $MODES; do
  flag="--collector.partition-series=$mode"
  [ "$mode" = "default" ] && flag=""
  "$BIN" serve --kafka.server="$addr" --scope=cluster --kafka.refresh-interval=10s --kafka.request-timeout=30s \
    $flag --web.listen-address=127.0.0.1:$PORT --web.disable-exporter-metrics >/dev/null 2>&1 &
  exp=$!
  up() { curl -s "127.0.0.1:$PORT/metrics?name[]=kafka_replication_up" | awk '$1 == "kafka_replication_up" {print $2}'; }
  for _ in $(seq 1200); do [ "$(up)" = "1" ] && break; sleep 0.5; done
  curl -s -o "$work/scrape" "127.0.0.1:$PORT/metrics"
  total=$(grep -vc '^#' "$work/scrape")
  per=$(grep -v '^#' "$work/scrape" | grep -c 'partition="' || true)
  printf '%s: %d partitions, %d series, %d with a partition label (%.3f per partition), %d bytes\n' \
    "${mode}" "$n" "$total" "$per" "$(echo "scale=3; $per / $n" | bc)" "$(stat -c %s "$work/scrape")"
  kill $exp; wait $exp 2>/dev/null || true
done
