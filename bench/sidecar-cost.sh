#!/usr/bin/env bash
# Measures the whole sidecar (follow + split + parse + check + state) beside a broker log
# written at 100k lines/s: the project's genlog mix (internal/genlog) over 10,000 partitions, rotated by rename
# every 200k lines. Prints the exporter's CPU (% of a core) and max RSS from /usr/bin/time -v,
# and checks that every line was read. The first figure is the follow cost alone (from /proc, before
# any scrape); /usr/bin/time's figures at the end include the two scrapes of ~140k series. Usage: bash bench/sidecar-cost.sh [seconds]
# BIN=path measures another build (for before/after runs, interleaved); by default `make build`'s.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
RATE=${RATE:-100000}
work=$(mktemp -d)
trap 'kill $exp 2>/dev/null || true; rm -rf "$work"' EXIT
BIN=${BIN:-}
if [ -z "$BIN" ]; then make -s build; BIN=bin/kafka_replication_exporter; fi
go run ./internal/genlog/cmd/genlog -lines $((SECS * RATE)) -partitions 10000 -seed 3 \
  -manifest "$work/m.json" >"$work/src.log"
: >"$work/server.log"
/usr/bin/time -v "$BIN" serve --log.file="$work/server.log" \
  --web.listen-address=127.0.0.1:19742 --web.disable-exporter-metrics 2>"$work/time.out" >/dev/null &
exp=$!
sleep 1
pid=$(pgrep -P $exp)
ticks() { awk '{print $14 + $15}' /proc/$pid/stat; }   # utime + stime, in clock ticks
t0=$(ticks); s0=$(date +%s.%N)
python3 - "$work/src.log" "$work/server.log" "$RATE" <<'PY'
import sys, time, os
src, dst, rate = sys.argv[1], sys.argv[2], int(sys.argv[3])
batch, rotate_every = rate // 10, 200000
out, n, t0 = open(dst, "a"), 0, time.time()
with open(src) as f:
    while True:
        lines = [l for _, l in zip(range(batch), f)]
        if not lines: break
        out.writelines(lines); out.flush(); n += len(lines)
        if n % rotate_every < batch:          # log4j-style rename + create
            out.close(); os.rename(dst, dst + ".%d" % n); out = open(dst, "a")
        time.sleep(max(0, t0 + n / rate - time.time()))
out.close()
print("wrote %d lines in %.1fs" % (n, time.time() - t0))
PY
sleep 1
t1=$(ticks); s1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
echo "following only (before any scrape): $(echo "scale=1; 100 * ($t1 - $t0) / $(getconf CLK_TCK) / ($s1 - $s0)" | bc)% of a core over $(echo "$s1 - $s0" | bc | cut -c1-5) s, peak RSS $((hwm / 1024)) MB"
read_lines=$(curl -s 127.0.0.1:19742/metrics | awk '/^kafka_replication_log_lines_total/ {print $2}')
parts=$(curl -s 127.0.0.1:19742/metrics | grep -c '^kafka_replication_partition_high_watermark_updates_total' || true)
pkill -TERM -P $exp || true
wait $exp || true   # $exp is /usr/bin/time; the exporter under it got the SIGTERM
echo "lines read by the exporter: $read_lines (expected $(wc -l < "$work/src.log")), partitions in state: $parts"
grep -E "Percent of CPU|Maximum resident|Elapsed|User time|System time" "$work/time.out" || cat "$work/time.out"
