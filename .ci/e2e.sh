#!/usr/bin/env bash
# Runs the real-Kafka scenarios, the sidecar tests and the alert loop (make e2e).
#
# They start real JVMs and real Prometheus/Alertmanager on a 2-core machine, so a
# top-level test that fails is run once more, on its own, and both outcomes are
# printed: a retry that passes is reported as such (grep e2e.log for RETRY), never
# hidden. A test that fails twice fails the build.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
log=e2e.log
bash .ci/install-prometheus-tools.sh || exit 1

$GO test -count=1 -timeout 45m -v ./e2e/... >"$log" 2>&1
rc=$?
grep -E '^(--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic)' "$log"
[ $rc -eq 0 ] && exit 0

failed=$(grep -E '^--- FAIL: Test[A-Za-z0-9_]+' "$log" | sed -E 's/^--- FAIL: (Test[A-Za-z0-9_]+).*/\1/' | sort -u | paste -sd'|' -)
if [ -z "$failed" ]; then
	echo "e2e failed without a failing top-level test (build error or panic); see $log" >&2
	tail -n 60 "$log" >&2
	exit $rc
fi
# The marker goes to e2e.log too: a clean run is one whose e2e.log has no RETRY.
echo "RETRY: running the failed e2e tests once more: $failed" | tee -a "$log"
$GO test -count=1 -timeout 30m -v -run "^(${failed})\$" ./e2e/... >"$log.retry" 2>&1
rc=$?
grep -E '^(--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic)' "$log.retry"
if [ $rc -ne 0 ]; then
	echo "e2e failed twice; see $log and $log.retry" >&2
	grep -B2 -A30 -E '^\s*--- FAIL' "$log.retry" | tail -n 120 >&2
fi
exit $rc
