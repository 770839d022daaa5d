#!/usr/bin/env bash
# Catching up a backlog: `serve --log.from-beginning` over three TRACE log files until /-/ready answers 200, against
# `verify` over the same files, interleaved run by run. Prints each run's wall time, throughput and peak RSS
# (/usr/bin/time -v). The files are one block of the project's genlog mix (internal/genlog), repeated until each is a
# third of the size asked for. Usage: bash bench/catchup-cost.sh [GiB, default 1] [runs, default 3]
# BIN=path measures another build; WORK=dir keeps (and reuses) the generated files there.
set -euo pipefail
cd "$(dirname "$0")/.."
GIB=${1:-1}
RUNS=${2:-3}
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
want=$((GIB * 1024 * 1024 * 1024 / 3))
files=()
for name in server state-change controller; do
	f="$work/$name.log"
	files+=("$f")
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -ge "$want" ] && continue
	[ -f "$work/block.log" ] || go run ./internal/genlog/cmd/genlog -lines 400000 -partitions 10000 -seed 3 >"$work/block.log"
	: >"$f"
	while [ "$(stat -c %s "$f")" -lt "$want" ]; do cat "$work/block.log" >>"$f"; done
done
total=$(cat "${files[@]}" | wc -c)
args=()
for f in "${files[@]}"; do args+=("--log.file=$f"); done
echo "backlog: $((total / 1024 / 1024)) MiB over ${#files[@]} files"

rss() { awk -F': ' '/Maximum resident/ {printf "%d MB", $2 / 1024}' "$1"; }
for i in $(seq "$RUNS"); do
	s0=$(date +%s.%N)
	/usr/bin/time -v "$BIN" serve "${args[@]}" --log.from-beginning --web.listen-address=127.0.0.1:19743 \
		--web.disable-exporter-metrics 2>"$work/serve.time" >/dev/null &
	tpid=$!
	until [ "$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:19743/-/ready)" = 200 ]; do sleep 0.1; done
	s1=$(date +%s.%N)
	pkill -TERM -P $tpid || true
	wait $tpid || true
	secs=$(echo "$s1 - $s0" | bc)
	echo "run $i serve:  $(printf %.1f "$secs") s to ready, $(echo "$total / 1048576 / $secs" | bc) MiB/s, peak RSS $(rss "$work/serve.time")"

	s0=$(date +%s.%N)
	/usr/bin/time -v "$BIN" verify "${files[@]}" >/dev/null 2>"$work/verify.time" || true
	s1=$(date +%s.%N)
	secs=$(echo "$s1 - $s0" | bc)
	echo "run $i verify: $(printf %.1f "$secs") s, $(echo "$total / 1048576 / $secs" | bc) MiB/s, peak RSS $(rss "$work/verify.time")"
done
