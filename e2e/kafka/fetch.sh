#!/bin/sh
# fetch.sh VERSION — put the jars of Apache Kafka VERSION (broker + the logging
# runtime its distribution ships) into a per-version cache outside the repo:
#   ${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}/kafka-VERSION/libs
# Prints that libs directory. A marker file, written last, makes reruns free
# and means an interrupted download is never mistaken for a complete one.
set -eu

version=${1:?usage: fetch.sh KAFKA_VERSION (e.g. 4.1.1 or 3.9.1)}
here=$(cd "$(dirname "$0")" && pwd)
cache=${KRE_CACHE:-$HOME/.cache/kafka_replication_exporter}
dest=$cache/kafka-$version
marker=$dest/.complete

if [ -f "$marker" ]; then
	echo "$dest/libs"
	exit 0
fi

case $version in
3.*) profile=reload4j ;;
*) profile=log4j2 ;;
esac

# download fetches the jars afresh, over any partial copy of a failed try.
download() {
	rm -rf "$dest/libs"
	mvn -q -B -f "$here/pom.xml" -P "$profile" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dest/libs" >&2
}
. "$here/retry.sh"
mkdir -p "$dest"
retry "download of Kafka $version" download

date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
echo "$dest/libs"
