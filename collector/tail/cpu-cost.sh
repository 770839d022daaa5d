#!/bin/sh
# cpu-cost.sh measures the follower alone beside a 100k lines/s writer:
# % of a core and max RSS from /usr/bin/time -v, once polling only and once
# with the directory watch. Usage: collector/tail/cpu-cost.sh [seconds]
set -eu
secs=${1:-20}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tailcost" ./collector/tail/internal/tailcost
for mode in poll fsnotify; do
	rm -f "$work"/server.log*
	flag=""
	[ "$mode" = fsnotify ] && flag="-fsnotify"
	: >"$work/server.log"
	/usr/bin/time -v "$work/tailcost" follow -path "$work/server.log" -seconds $((secs + 2)) $flag \
		>"$work/follow.out" 2>"$work/time.out" &
	follower=$!
	"$work/tailcost" write -path "$work/server.log" -seconds "$secs" -rate 100000 -rotate-every 200000
	wait "$follower"
	echo "== $mode: $(cat "$work/follow.out")"
	grep -E 'Percent of CPU|Maximum resident|Elapsed|User time|System time' "$work/time.out"
done
