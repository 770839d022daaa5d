#!/usr/bin/env bash
# Runs the real-Kafka scenarios, the sidecar tests and the alert loop (make e2e).
#
# The full `go test -v` output goes to e2e.log as it happens; the terminal gets one
# line per test as it starts and as it ends, with the time of day and the duration,
# so a run of ten minutes shows where it is. Subtests are reported by go test when
# their top-level test ends, so their result lines come in a burst then.
#
# They start real JVMs and real Prometheus/Alertmanager on a 2-core machine, so a
# top-level test that fails is run once more, on its own, and both outcomes are
# printed: a retry that passes is reported as such (grep e2e.log for RETRY), never
# hidden. A test that fails twice fails the build. Whatever the outcome, the
# last lines printed name the tests that passed only on their retry (a RETRIED
# banner: each is a failure to look into) and count the "address already in
# use" lines of the output (a port taken between its choice and its bind).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
log=e2e.log
bash .ci/install-prometheus-tools.sh || exit 1

# progress prints the start of every top-level test and of its direct subtests
# (a Kafka version, a scenario), every PASS/FAIL/SKIP line down to that depth,
# and go test's package result and panic lines, each after the time of day.
progress() {
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^===\ RUN\ +Test[^/]*(/[^/]*)?$ ||
			$line =~ ^(\ {4})?---\ (PASS|FAIL|SKIP): ||
			$line =~ ^(PASS|FAIL|ok|panic:) ]]; then
			printf '%(%H:%M:%S)T %s\n' -1 "$line"
		fi
	done
}

# gotest runs go test with the given arguments, appends its output to the file
# named first and prints the progress lines; it returns go test's exit status.
gotest() {
	local out=$1
	shift
	$GO test -count=1 "$@" 2>&1 | tee -a "$out" | progress
	return "${PIPESTATUS[0]}"
}

# report prints the RETRIED banner and the count of taken ports; it runs at
# every exit, so these are the last lines of make test.
report() {
	local passed n hits
	if [ -s "$log.retry" ]; then
		passed=$(grep -E '^--- PASS: Test[A-Za-z0-9_]+' "$log.retry" | sed -E 's/^--- PASS: (Test[A-Za-z0-9_]+).*/\1/' | sort -u)
		if [ -n "$passed" ]; then
			n=$(wc -l <<<"$passed")
			echo
			echo "################################################################################"
			echo "RETRIED: $n top-level test(s) failed once and passed on retry: $(paste -sd' ' - <<<"$passed")"
			echo "  A retry hides a failure, it does not fix it: see the first run in $log."
			echo "################################################################################"
		fi
	fi
	hits=$(cat "$log" "$log.retry" 2>/dev/null | grep -ci 'address already in use')
	if [ "$hits" -gt 0 ]; then
		echo "PORTS: $hits line(s) of the e2e output say \"address already in use\" (a port taken between its choice and its bind):"
		cat "$log" "$log.retry" 2>/dev/null | grep -i 'address already in use' | head -n 5 | cut -c1-300 | sed 's/^/  /'
	fi
	if [ ! -s "$log.retry" ] && [ "$hits" -eq 0 ]; then
		echo "e2e: no retry, no \"address already in use\""
	fi
}
trap report EXIT

: >"$log"
rm -f "$log.retry"
# go test holds back a package's output until its tests end when it tests
# several packages, so the scenarios (package e2e) run on their own, streamed,
# after the unit tests of the harness and the stack (one ok line each).
helpers=$($GO list ./e2e/... | grep -v '/e2e$')
echo "e2e: the harness's unit tests, then the real-Kafka scenarios; full output in $log"
# shellcheck disable=SC2086 # one package path per word
gotest "$log" $helpers
rc=$?
gotest "$log" -v -timeout 45m ./e2e/
rc2=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && exit 0
[ $rc2 -ne 0 ] && rc=$rc2

failed=$(grep -E '^--- FAIL: Test[A-Za-z0-9_]+' "$log" | sed -E 's/^--- FAIL: (Test[A-Za-z0-9_]+).*/\1/' | sort -u | paste -sd'|' -)
if [ -z "$failed" ]; then
	echo "e2e failed without a failing top-level test (build error or panic); see $log" >&2
	tail -n 60 "$log" >&2
	exit $rc
fi
# The marker goes to e2e.log too: a clean run is one whose e2e.log has no RETRY.
echo "RETRY: running the failed e2e tests once more: $failed" | tee -a "$log"
: >"$log.retry"
# -p 1 streams the output of several packages too; everything is built by now.
gotest "$log.retry" -v -p 1 -timeout 30m -run "^(${failed})\$" ./e2e/...
rc=$?
if [ $rc -ne 0 ]; then
	echo "e2e failed twice; see $log and $log.retry" >&2
	grep -B2 -A30 -E '^\s*--- FAIL' "$log.retry" | tail -n 120 >&2
fi
exit $rc
