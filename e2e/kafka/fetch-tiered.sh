#!/bin/sh
# fetch-tiered.sh VERSION — put Kafka's own LocalTieredStorage (the remote
# storage manager of its tiered-storage tests, in the kafka-storage test jar,
# classifier test) of VERSION into the cache beside fetch.sh's:
#   ${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}/kafka-storage-test-VERSION/
# Prints the jar's path. A marker file, written last, makes reruns free.
set -eu

version=${1:?usage: fetch-tiered.sh VERSION (a kafka-storage release with a test jar, e.g. 4.1.2)}
here=$(cd "$(dirname "$0")" && pwd)
cache=${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}
dest=$cache/kafka-storage-test-$version
jar=$dest/kafka-storage-$version-test.jar
marker=$dest/.complete

if [ -f "$marker" ]; then
	echo "$jar"
	exit 0
fi

download() {
	rm -f "$jar"
	mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
		-Dartifact="org.apache.kafka:kafka-storage:$version:jar:test" -DoutputDirectory="$dest" >&2
}
. "$here/retry.sh"
mkdir -p "$dest"
retry "download of the kafka-storage $version test jar" download

date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
echo "$jar"
