#!/usr/bin/env bash
# Measures /metrics under scrapers that never read: the exporter (cluster scope) polls a
# 3-broker kfake of TOPICS x 1000 partitions in another process; after three identity and
# three gzip scrapes, 40 clients each ask a query of their own (distinct name[] sets, every
# other one gzip) and read nothing but the status line (bench/stuckscrapers). Prints the
# scrape times, the exporter's peak RSS (VmHWM) before and with the stuck clients, and one
# gzip scrape beside them. --web.max-requests=41 leaves that scrape a slot; the write timeout
# is 5m so that none is freed during the measurement.
# Usage: TOPICS=100 bash bench/stuck-scrapers.sh   (default 10: 10k partitions)
# BIN=path measures another build (for before/after runs); by default `make build`'s.
set -euo pipefail
cd "$(dirname "$0")/.."
TOPICS=${TOPICS:-10}
PORT=${PORT:-19745}
work=$(mktemp -d)
trap 'kill $stuck $exp $fake 2>/dev/null || true; rm -rf "$work"' EXIT
stuck=
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
go build -o "$work/kfake" ./e2e/cmd/kfake
go build -o "$work/stuckscrapers" ./bench/stuckscrapers
"$work/kfake" --topics "$TOPICS" --partitions 1000 >"$work/addrs" &
fake=$!
for _ in $(seq 600); do [ -s "$work/addrs" ] && break; sleep 0.1; done
addr=$(cut -d, -f1 "$work/addrs")
"$BIN" serve --kafka.server="$addr" --scope=cluster --kafka.refresh-interval=10s \
  --kafka.request-timeout=30s --web.listen-address=127.0.0.1:$PORT --web.disable-exporter-metrics \
  --web.max-requests=41 --web.write-timeout=5m >/dev/null 2>&1 &
exp=$!
# shellcheck source=bench/exporter-cost.sh
. bench/exporter-cost.sh
wait_up
measure_scrapes "$work/body"
echo "series: $(grep -vc '^#' "$work/body")"
echo "exporter peak RSS after the ordinary scrapes: $(peak_rss)"
"$work/stuckscrapers" -addr 127.0.0.1:$PORT -n 40 >"$work/stuck" &
stuck=$!
for _ in $(seq 1200); do
  [ -s "$work/stuck" ] && break
  kill -0 "$exp" 2>/dev/null || { echo "the exporter died"; exit 1; }
  sleep 0.1
done
sleep 1
echo "40 distinct stuck clients: $(cat "$work/stuck"); exporter peak RSS: $(peak_rss)"
curl -s -o /dev/null -H "Accept-Encoding: gzip" -w "full /metrics (gzip) beside them: %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$PORT/metrics"
