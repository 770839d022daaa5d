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

tries=0
delay=5
while :; do
	tries=$((tries + 1))
	rm -rf "$dest"
	mkdir -p "$dest"
	if mvn -q -B -f "$here/tools-pom.xml" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dest" >&2; then
		break
	fi
	if [ "$tries" -ge 3 ]; then
		echo "fetch-tools.sh: download of Kafka $version's tools failed after $tries tries" >&2
		exit 1
	fi
	echo "fetch-tools.sh: try $tries failed, retrying in ${delay}s" >&2
	sleep "$delay"
	delay=$((delay * 3))
done

date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
echo "$dest"
