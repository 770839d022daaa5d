#!/usr/bin/env bash
# Reproduces the figures in docs/benchmarks.md. Run it on a quiet machine:
#   bash docs/bench.sh              # ≈1 GB genlog file (4M lines)
#   LINES=200000 bash docs/bench.sh # quick look
# Everything is measured side by side in one run, because these machines are noisy.
# verify exits 1 on this file (genlog injects violations); that is expected.
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-4000000}
WORK=${BENCH_DIR:-/tmp/kre-bench}
SHARED=${SHARED:-../shared}
mkdir -p "$WORK"

log="$WORK/genlog-$LINES.log"
if [ ! -s "$log" ]; then
  echo "== generating $log with the seed's genlog.py ($LINES lines, seed 7)"
  python3 "$SHARED/bench/genlog.py" --lines "$LINES" --seed 7 --out "$log" --manifest "$WORK/manifest-$LINES.json"
fi
ls -l "$log"

make -s build
# The seed's script needs GNU awk (3-argument match); Debian's default awk is mawk.
command -v gawk >/dev/null || { apt-get update -qq && apt-get install -y -qq gawk; }
mkdir -p "$WORK/gawk-bin" && ln -sf "$(command -v gawk)" "$WORK/gawk-bin/awk"

cpu() { # prints user+sys CPU seconds and wall seconds of a command pinned to one core
  /usr/bin/time -f '%U %S %e' -o "$WORK/time.txt" taskset -c 0 "$@" >/dev/null 2>&1 || true
  read -r u s e < <(tail -n 1 "$WORK/time.txt")
  echo "$(echo "$u + $s" | bc) $e"
}

size=$(stat -c %s "$log")
echo "== verify vs the seed's script on the same file (one core each, best of 3, CPU seconds)"
best() { local b=999999; for _ in 1 2 3; do r=$(cpu "$@" | cut -d' ' -f1); b=$(echo "if ($r < $b) $r else $b" | bc); done; echo "$b"; }
ours=$(best bin/kafka_replication_exporter verify --format=json "$log")
seed=$(best env PATH="$WORK/gawk-bin:$PATH" bash "$SHARED/bench/verify-replication-invariants.sh" "$log")
echo "ours: ${ours}s  $(echo "scale=0; $size / $ours / 1000000" | bc) MB/s"
echo "seed: ${seed}s  $(echo "scale=0; $size / $seed / 1000000" | bc) MB/s"
echo "ratio: $(echo "scale=1; $seed / $ours" | bc)x"
if command -v hyperfine >/dev/null; then
  hyperfine -i -w 1 -r 3 -N \
    "taskset -c 0 bin/kafka_replication_exporter verify --format=json $log" \
    "env PATH=$WORK/gawk-bin:$PATH taskset -c 0 bash $SHARED/bench/verify-replication-invariants.sh $log" || true
fi

echo "== parser (ours vs a regexp baseline), splitter"
go test -run '^$' -bench . -benchmem -count 3 ./logparse/
echo "== verify end to end (go test -bench)"
VERIFY_BENCH_FILE="$log" go test -run '^$' -bench VerifyGenlog -benchtime 3x ./cmd/kafka_replication_exporter/
echo "== /metrics render, admin refresh"
go test -run '^$' -bench 'LogCollector10kPartitions|Admin' -benchmem -benchtime 3x ./collector/
echo "== follower throughput and CPU cost beside a 100k lines/s writer"
go test -run '^$' -bench FollowerThroughput -benchtime 20x ./collector/tail/
bash collector/tail/cpu-cost.sh 15
