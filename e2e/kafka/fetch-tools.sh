#!/bin/sh
# fetch-tools.sh VERSION — put Kafka VERSION's command-line tools (the
# kafka-tools jar and its runtime dependencies) into
#   ${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}/kafka-VERSION/tools
# beside the broker's libs/ (fetch.sh), and print that directory. Apart from
# libs/ so a cache filled before the tools were needed stays valid; the same
# marker-file rule as fetch.sh.
set -eu

version=${1:?usage: fetch-tools.sh KAFKA_VERSION (e.g. 4.4.0 or 3.9.1)}
here=$(cd "$(dirname "$0")" && pwd)
cache=${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}
dest=$cache/kafka-$version/tools
marker=$dest/.complete

if [ -f "$marker" ]; then
	echo "$dest"
	exit 0
fi

# download fetches the jars afresh, over any partial copy of a failed try.
download() {
	rm -rf "$dest"
	mkdir -p "$dest"
	mvn -q -B -f "$here/tools-pom.xml" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dest" >&2
}
. "$here/retry.sh"
retry "download of Kafka $version's tools" download

date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
echo "$dest"
