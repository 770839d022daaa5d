#!/bin/sh
# capture-fixtures.sh — regenerate logparse/testdata/real-<version>-<what>.log
# from real Kafka runs of the e2e scenarios (see e2e/README.md).
#
#   e2e/capture-fixtures.sh            # run the scenarios, then trim their logs
#   KRE_E2E_DIR=/tmp/x SKIP_RUN=1 e2e/capture-fixtures.sh   # trim an earlier run
#
# Afterwards: go test ./logparse/ -run Golden -update, and read the diff.
set -eu
cd "$(dirname "$0")/.."

root=${KRE_E2E_DIR:-$(mktemp -d /tmp/kre-capture-XXXXXX)}
if [ -z "${SKIP_RUN:-}" ]; then
	KRE_E2E_DIR=$root go test ./e2e/ -run 'TestReplication|TestUncleanElection' -count=1 -timeout 30m
fi

go build -o "$root/trimlog" ./e2e/internal/trimlog

# logs DIR NODE FILE: the node's files of one log, rolled ones first.
logs() {
	ls "$1/node-$2/logs/$3".20* 2>/dev/null || true
	echo "$1/node-$2/logs/$3"
}

for v in 4.1.1 3.9.1; do
	r=$root/TestReplication_$v
	u=$root/TestUncleanElection_$v
	out=logparse/testdata/real-$v
	trim() { "$root/trimlog" "$@"; }

	# Leader 1 under acks=all: HW advances, ack progress, follower LEOs.
	trim -cluster "$r" -topics baseline -per-kind 25 $(logs "$r" 1 server.log) >"$out-leader-acks.log"
	# ISR shrink (slow follower, leader-driven) and expand (restart), leader 1.
	trim -cluster "$r" -topics 'isr-churn|slow-follower' -per-kind 10 $(logs "$r" 1 server.log) >"$out-isr-churn.log"
	# NotEnoughReplicas rejections (with their continuation line) and the
	# under-min-ISR HW stall (TRACE), leader 1 alone in the ISR.
	trim -cluster "$r" -topics 'min-isr|hw-stall' -per-kind 12 $(logs "$r" 1 server.log) >"$out-min-isr.log"
	# Failover seen by node 2, which became leader after node 1 was killed.
	trim -cluster "$r" -topics failover -per-kind 15 $(logs "$r" 2 server.log) >"$out-failover-new-leader.log"
	trim -cluster "$r" -topics '.*' $(logs "$r" 2 state-change.log) >"$out-state-change.log"
	# Unclean election: the old leader truncating below its HW, the new
	# leader's state changes, and the controller's record of it.
	trim -cluster "$u" -topics unclean -per-kind 15 $(logs "$u" 1 server.log) >"$out-unclean-old-leader.log"
	trim -cluster "$u" -topics unclean $(logs "$u" 2 state-change.log) >"$out-unclean-state-change.log"
	trim -cluster "$u" -topics unclean $(logs "$u" 1 controller.log) >"$out-unclean-controller.log"
done
wc -l logparse/testdata/real-*.log
