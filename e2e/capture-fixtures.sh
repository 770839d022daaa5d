#!/bin/sh
# capture-fixtures.sh — regenerate internal/logparse/testdata/real-<version>-<what>.log
# from real Kafka runs of the e2e scenarios (see e2e/README.md).
#
#   e2e/capture-fixtures.sh                     # run 4.4.0's scenarios, then trim their logs
#   VERSIONS="4.4.0 3.9.1" e2e/capture-fixtures.sh
#   KRE_E2E_DIR=/tmp/x SKIP_RUN=1 e2e/capture-fixtures.sh   # trim an earlier run
#
# A fixture whose scenario did not run on a version (the version matrix runs
# fewer scenarios on 4.1.1) keeps its earlier capture.
# Afterwards: go test ./internal/logparse/ -run Golden -update, and read the diff.
set -eu
cd "$(dirname "$0")/.."

versions=${VERSIONS:-4.4.0}
root=${KRE_E2E_DIR:-$(mktemp -d /tmp/kre-capture-XXXXXX)}
if [ -z "${SKIP_RUN:-}" ]; then
	alt=$(echo "$versions" | sed 's/\./\\./g; s/ /|/g')
	KRE_E2E_DIR=$root go test ./e2e/ -run "^(TestReplication|TestUncleanElection)\$/^($alt)\$" -count=1 -timeout 30m
	KRE_E2E_DIR=$root KRE_E2E_CAPTURE_QUORUM=1 go test ./e2e/ -run "^(TestMetadataQuorumElectionCapture|TestMetadataQuorumResignCapture)\$/^($alt)\$" -count=1 -timeout 15m
fi

go build -o "$root/trimlog" ./e2e/internal/trimlog

# logs DIR NODE FILE: the node's files of one log, rolled ones first.
logs() {
	ls "$1/node-$2/logs/$3".20* 2>/dev/null || true
	echo "$1/node-$2/logs/$3"
}

# trim FIXTURE ARGS...: trimlog ARGS into FIXTURE, unless the run left nothing
# to keep. (sh functions share the caller's variables: hence fixture, not out.)
trim() {
	fixture=$1
	shift
	"$root/trimlog" "$@" >"$fixture.tmp"
	if [ -s "$fixture.tmp" ]; then
		mv "$fixture.tmp" "$fixture"
	else
		rm -f "$fixture.tmp"
		echo "capture-fixtures: nothing for $fixture in this run; kept as it was" >&2
	fi
}

for v in $versions; do
	r=$root/TestReplication_$v
	u=$root/TestUncleanElection_$v
	out=internal/logparse/testdata/real-$v

	# A scenario that did not run this time (its directory absent) keeps
	# its fixtures as they were.
	if [ -d "$r" ]; then
		# Leader 1 under acks=all: HW advances, ack progress, follower LEOs.
		trim "$out-leader-acks.log" -cluster "$r" -topics baseline -per-kind 25 $(logs "$r" 1 server.log)
		# ISR shrink (slow follower, leader-driven) and expand (restart), leader 1.
		trim "$out-isr-churn.log" -cluster "$r" -topics 'isr-churn|slow-follower' -per-kind 10 $(logs "$r" 1 server.log)
		# NotEnoughReplicas rejections (with their continuation line) and the
		# under-min-ISR HW stall (TRACE), leader 1 alone in the ISR.
		trim "$out-min-isr.log" -cluster "$r" -topics 'min-isr|hw-stall' -per-kind 12 $(logs "$r" 1 server.log)
		# Failover seen by node 2, which became leader after node 1 was killed.
		trim "$out-failover-new-leader.log" -cluster "$r" -topics failover -per-kind 15 $(logs "$r" 2 server.log)
		trim "$out-state-change.log" -cluster "$r" -topics '.*' $(logs "$r" 2 state-change.log)
	fi
	if [ -d "$u" ]; then
		# Unclean election: the old leader truncating below its HW, the new
		# leader's state changes, and the controller's record of it (on the
		# controller-only node 101).
		trim "$out-unclean-old-leader.log" -cluster "$u" -topics unclean -per-kind 15 $(logs "$u" 1 server.log)
		trim "$out-unclean-state-change.log" -cluster "$u" -topics unclean $(logs "$u" 2 state-change.log)
		trim "$out-unclean-controller.log" -cluster "$u" -topics unclean $(logs "$u" 101 controller.log)
	fi
	# The metadata quorum's active controller killed and restarted: the
	# test names the old and the new leader in quorum-leaders.txt.
	q=$root/TestMetadataQuorumElectionCapture_$v
	if [ -f "$q/quorum-leaders.txt" ]; then
		read -r old new <"$q/quorum-leaders.txt"
		trim "$out-quorum-new-leader.log" -cluster "$q" -topics '^$' $(logs "$q" "$new" server.log)
		trim "$out-quorum-old-leader.log" -cluster "$q" -topics '^$' $(logs "$q" "$old" server.log)
		trim "$out-quorum-controller.log" -cluster "$q" -topics '^$' $(logs "$q" "$new" controller.log)
		trim "$out-quorum-broker.log" -cluster "$q" -topics '^$' $(logs "$q" 1 server.log)
	fi
	# The two other voters frozen until the leader resigned for want of
	# their fetches: the test names the leader first in quorum-resign.txt.
	q=$root/TestMetadataQuorumResignCapture_$v
	if [ -f "$q/quorum-resign.txt" ]; then
		read -r leader _ <"$q/quorum-resign.txt"
		trim "$out-quorum-resign.log" -cluster "$q" -topics '^$' $(logs "$q" "$leader" server.log)
	fi
done
wc -l internal/logparse/testdata/real-*.log
