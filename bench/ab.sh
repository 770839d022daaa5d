#!/usr/bin/env bash
# A/B of one Go benchmark between two test binaries, run interleaved (A, B, B, A, A, B, …) so that
# the development VM's slow phases hit both. Prints the best and median ns/op of each and the median
# of the ratios of adjacent runs (B/A), the figure least disturbed by the machine's drift.
#   git worktree add /tmp/old <commit> && (cd /tmp/old && go test -c -o /tmp/a.test ./internal/logparse/)
#   go test -c -o /tmp/b.test ./internal/logparse/
#   bash bench/ab.sh /tmp/a.test /tmp/b.test 'ParseHWUpdate$' 20
# Plain POSIX awk (mawk, busybox or gawk): the sorting is done here, not with gawk's asort.
set -euo pipefail
a=$1 b=$2 re=$3 n=${4:-20}
run() { "$1" -test.run '^$' -test.bench "$re" -test.benchtime 150ms | awk '/^Benchmark/ {print $3; exit}'; }
for i in $(seq "$n"); do
  if (( i % 2 )); then echo "a $(run "$a")"; echo "b $(run "$b")"; else echo "b $(run "$b")"; echo "a $(run "$a")"; fi
done | awk '
  function sort(v, n,   i, j, x) { for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x } }
  $1 == "a" { A[++na] = $2 } $1 == "b" { B[++nb] = $2 }
  END {
    for (i = 1; i <= na; i++) R[i] = B[i] / A[i]
    n = na; sort(R, n); sort(A, na); sort(B, nb)
    printf "A best %.1f median %.1f | B best %.1f median %.1f | median B/A %.3f (quartiles %.3f–%.3f) over %d pairs\n",
      A[1], A[int((na + 1) / 2)], B[1], B[int((nb + 1) / 2)], R[int((n + 1) / 2)], R[int((n + 3) / 4)], R[int((3 * n + 1) / 4)], n
  }'
