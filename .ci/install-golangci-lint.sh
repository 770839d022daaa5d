#!/usr/bin/env bash
# Installs the pinned golangci-lint that `make lint` runs, into the same cache as the Prometheus tools, and prints
# its path. Reused when the pinned version is already there; the first build takes a few minutes on 2 cores.
# Usage: .ci/install-golangci-lint.sh        (KRE_CACHE overrides the cache)
set -euo pipefail
readonly VERSION=2.15.0
readonly bin="${KRE_CACHE:-${HOME}/.cache/kafka_replication_exporter}/bin"
mkdir -p "${bin}"
if ! "${bin}/golangci-lint" version 2>/dev/null | grep -q "version ${VERSION}"; then
	echo "install-golangci-lint.sh: building golangci-lint ${VERSION}" >&2
	for attempt in 1 2 3; do
		if GOBIN="${bin}" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v${VERSION}" >&2; then
			break
		fi
		[ "${attempt}" = 3 ] && exit 1
		echo "install-golangci-lint.sh: attempt ${attempt} failed, retrying" >&2
		sleep $((attempt * 5))
	done
fi
echo "${bin}/golangci-lint"
