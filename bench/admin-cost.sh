#!/usr/bin/env bash
# Measures the admin half alone at 100k partitions: the exporter (cluster scope, every
# partition exported) polls a 3-broker kfake serving 100 topics x 1000 partitions, RF 3, in
# ANOTHER process, so the exporter's CPU, peak RSS and refresh time are its own.
# Usage: bash bench/admin-cost.sh [refreshes]   (default 5; one every 10 s)
# BIN=path measures another build (for before/after runs, interleaved); by default `make build`'s.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
PORT=${PORT:-19744}
work=$(mktemp -d)
trap 'kill $exp $fake 2>/dev/null || true; rm -rf "$work"' EXIT
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
go build -o "$work/kfake" ./e2e/cmd/kfake
"$work/kfake" --topics 100 --partitions 1000 >"$work/addrs" &
fake=$!
for _ in $(seq 600); do [ -s "$work/addrs" ] && break; sleep 0.1; done
addr=$(cut -d, -f1 "$work/addrs")
"$BIN" serve --kafka.server="$addr" --scope=cluster --kafka.refresh-interval=10s \
  --kafka.request-timeout=30s --web.listen-address=127.0.0.1:$PORT --web.disable-exporter-metrics >/dev/null 2>&1 &
exp=$!
# shellcheck source=bench/exporter-cost.sh
. bench/exporter-cost.sh
wait_up
measure_refreshes "$N" "10 s"
measure_scrapes "$work/body"
echo "series: $(grep -vc '^#' "$work/body")"
echo "exporter peak RSS including the scrapes: $(peak_rss)"
