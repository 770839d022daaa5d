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

mkdir -p "$dest"
tries=0
delay=5
while :; do
	tries=$((tries + 1))
	rm -rf "$dest/libs"
	if mvn -q -B -f "$here/pom.xml" -P "$profile" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dest/libs" >&2; then
		break
	fi
	if [ "$tries" -ge 3 ]; then
		echo "fetch.sh: download of Kafka $version failed after $tries tries" >&2
		exit 1
	fi
	echo "fetch.sh: try $tries failed, retrying in ${delay}s" >&2
	sleep "$delay"
	delay=$((delay * 3))
done

date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
echo "$dest/libs"
