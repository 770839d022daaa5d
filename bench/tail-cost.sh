#!/bin/sh
# tail-cost.sh measures the follower (internal/tail) alone beside a 100k lines/s writer:
# % of a core and max RSS from /usr/bin/time -v.
# Usage: bash bench/tail-cost.sh [seconds]
set -eu
secs=${1:-20}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tailcost" ./bench/tailcost
: >"$work/server.log"
/usr/bin/time -v "$work/tailcost" follow -path "$work/server.log" -seconds $((secs + 2)) \
	>"$work/follow.out" 2>"$work/time.out" &
follower=$!
"$work/tailcost" write -path "$work/server.log" -seconds "$secs" -rate 100000 -rotate-every 200000
wait "$follower"
echo "== $(cat "$work/follow.out")"
grep -E 'Percent of CPU|Maximum resident|Elapsed|User time|System time' "$work/time.out"
