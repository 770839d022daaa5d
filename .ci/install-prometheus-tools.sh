#!/usr/bin/env bash
# Installs the pinned Prometheus tools the alert and dashboard tests run:
# promtool, prometheus, amtool, alertmanager and (if it builds) pint.
#
# They go into a cache outside the repository and are reused when the pinned
# version is already there, so only the first run pays the build. promtool +
# prometheus are built with the tag remove_all_sd (no cloud service-discovery
# SDKs). /usr/bin/time of the go install below on this project's 2-core
# machine (load average under 3):
#   cold, empty GOCACHE and GOMODCACHE:  149 s wall, 273 s CPU, 1.1 GB RSS peak
#   modules cached, empty build cache:   149 s wall, 277 s CPU
#   warm, both cached (relink only):       4 s wall
#   without the tag, modules cached:     299 s wall, 569 s CPU, 3.3 GB RSS peak
# (At load average 12-40, shared with other builds, the cold build took 1335 s.)
#
# promtool is pinned to 3.x on purpose: Prometheus 3 made range selectors
# left-open, so Debian's promtool 2.42 evaluates the same rule test
# differently (count_over_time(x[1m]) at a sample boundary is 2 on 2.42, 1 on
# 3.x). CI and developers must run the
# same promtool or the tests in alerts/tests/ mean different things.
#
# Usage: .ci/install-prometheus-tools.sh        (KRE_CACHE overrides the cache)
set -euo pipefail

# Prometheus 3.x is published as Go module tags v0.3xx.y: v0.316.0 = v3.16.0.
readonly PROMETHEUS_MODULE_VERSION=v0.316.0
readonly PROMETHEUS_VERSION=3.16.0
# 0.32+ embed the web UI's build output (ui/app/dist), which is not in the
# module zip, so only amtool would build; 0.31.1 still ships generated assets.
readonly ALERTMANAGER_VERSION=0.31.1
readonly PINT_VERSION=0.87.0

readonly cache="${KRE_CACHE:-${HOME}/.cache/kafka_replication_exporter}"
readonly bin="${cache}/bin"
mkdir -p "${bin}"

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# retry runs a download-and-build step up to 3 times: the module proxy and
# apt mirrors fail transiently more often than the builds do.
retry() {
	local attempt
	for attempt in 1 2 3; do
		if "$@"; then
			return 0
		fi
		log "attempt ${attempt} failed: $*"
		sleep $((attempt * 5))
	done
	return 1
}

# has_version succeeds when every named binary exists and reports the version.
has_version() {
	local version=$1 tool
	shift
	for tool in "$@"; do
		"${bin}/${tool}" --version 2>&1 | grep -q "version ${version}" || return 1
	done
}

version_ldflags() {
	echo "-X github.com/prometheus/common/version.Version=$1"
}

install_prometheus() {
	if has_version "${PROMETHEUS_VERSION}" promtool prometheus; then
		log "promtool and prometheus ${PROMETHEUS_VERSION} already in ${bin}"
		return
	fi
	log "building promtool and prometheus ${PROMETHEUS_VERSION}"
	# One invocation, so both binaries share one module download and build.
	# remove_all_sd leaves out every cloud service discovery (file, static and
	# HTTP SD stay): the tests scrape static targets only.
	retry env GOBIN="${bin}" go install -tags remove_all_sd \
		-ldflags "$(version_ldflags "${PROMETHEUS_VERSION}")" \
		"github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_MODULE_VERSION}" \
		"github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_MODULE_VERSION}"
}

# install_alertmanager_from_debian is the fallback when the module proxy
# refuses alertmanager: the .deb is unpacked into the cache, never installed.
install_alertmanager_from_debian() {
	local work
	work=$(mktemp -d)
	(
		cd "${work}"
		apt-get download prometheus-alertmanager
		dpkg-deb -x prometheus-alertmanager_*.deb root
	) || { rm -rf "${work}"; return 1; }
	install -m 0755 "${work}/root/usr/bin/prometheus-alertmanager" "${bin}/alertmanager"
	install -m 0755 "${work}/root/usr/bin/amtool" "${bin}/amtool"
	rm -rf "${work}"
}

install_alertmanager() {
	if has_version "${ALERTMANAGER_VERSION}" alertmanager amtool; then
		log "alertmanager and amtool ${ALERTMANAGER_VERSION} already in ${bin}"
		return
	fi
	if "${bin}/amtool" --version 2>&1 | grep -q 'branch: debian'; then
		log "Debian's alertmanager and amtool already in ${bin} (remove them to retry the pinned build)"
		return
	fi
	log "building alertmanager and amtool ${ALERTMANAGER_VERSION}"
	if retry env GOBIN="${bin}" go install \
		-ldflags "$(version_ldflags "${ALERTMANAGER_VERSION}")" \
		"github.com/prometheus/alertmanager/cmd/alertmanager@v${ALERTMANAGER_VERSION}" \
		"github.com/prometheus/alertmanager/cmd/amtool@v${ALERTMANAGER_VERSION}"; then
		return
	fi
	log "module proxy refused alertmanager; falling back to Debian's prometheus-alertmanager"
	install_alertmanager_from_debian
}

# pint is optional: the tests do not need it. It only builds in a module of its
# own: `go install pint@version` fails on the proxy's refused version list, and
# sharing a module with prometheus v0.316.0 fails to compile.
install_pint() {
	if "${bin}/pint" version 2>/dev/null | grep -q "${PINT_VERSION}"; then
		log "pint ${PINT_VERSION} already in ${bin}"
		return
	fi
	log "building pint ${PINT_VERSION} (optional)"
	local work
	work=$(mktemp -d)
	if ! (
		cd "${work}" &&
			go mod init pint-tool >/dev/null 2>&1 &&
			retry go get -tool "github.com/cloudflare/pint/cmd/pint@v${PINT_VERSION}" &&
			GOBIN="${bin}" go install -ldflags "-X main.version=${PINT_VERSION}" github.com/cloudflare/pint/cmd/pint
	); then
		log "pint did not build; continuing without it"
	fi
	rm -rf "${work}"
}

install_prometheus
install_alertmanager
install_pint

for tool in promtool prometheus alertmanager amtool pint; do
	if [[ -x "${bin}/${tool}" ]]; then
		echo "${bin}/${tool}"
	fi
done
