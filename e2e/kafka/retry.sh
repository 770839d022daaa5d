# Sourced by fetch.sh and fetch-tools.sh.
# retry WHAT CMD... runs CMD up to 3 times, 5 then 15 seconds apart (Maven Central
# fails transiently more often than a build does), saying so on stderr under the
# calling script's name; after the third failure it exits 1, naming WHAT.
retry() {
	what=$1
	shift
	tries=0
	delay=5
	while :; do
		tries=$((tries + 1))
		if "$@"; then
			return 0
		fi
		if [ "$tries" -ge 3 ]; then
			echo "${0##*/}: $what failed after $tries tries" >&2
			exit 1
		fi
		echo "${0##*/}: try $tries failed, retrying in ${delay}s" >&2
		sleep "$delay"
		delay=$((delay * 3))
	done
}
