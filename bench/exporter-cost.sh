# Sourced by bench/admin-cost.sh and bench/groups-cost.sh: measures an exporter they
# started (pid $exp, listening on 127.0.0.1:$PORT) while it refreshes against a fake
# cluster, with no full scrape until the refreshes are counted.

# metric prints the value of one of the three small families the script polls.
metric() {
  curl -s "127.0.0.1:$PORT/metrics?name[]=kafka_replication_up&name[]=kafka_replication_refresh_duration_seconds&name[]=kafka_replication_last_refresh_timestamp_seconds" |
    awk -v m="$1" '$1 == m {print $2}'
}

# peak_rss prints the exporter's VmHWM in MB.
peak_rss() { echo "$(($(awk '/VmHWM/ {print $2}' /proc/$exp/status) / 1024)) MB"; }

# wait_up waits until the exporter's first refresh succeeded.
wait_up() {
  for _ in $(seq 600); do [ "$(metric kafka_replication_up)" = "1" ] && return; sleep 0.5; done
  echo "exporter never came up"
  exit 1
}

# measure_refreshes N EVERY prints the duration of the next N refreshes, the exporter's CPU
# over them and its peak RSS so far; it stops the script if the exporter dies meanwhile
# (saying whether the kernel OOM-killed it, when $cg names its memory cgroup).
measure_refreshes() {
  local n=$1 every=$2 t0 s0 t1 s1 last durations=""
  ticks() { awk '{print $14 + $15}' /proc/$exp/stat; }
  t0=$(ticks) s0=$(date +%s.%N) last=$(metric kafka_replication_last_refresh_timestamp_seconds)
  for _ in $(seq "$n"); do
    while [ "$(metric kafka_replication_last_refresh_timestamp_seconds)" = "$last" ]; do
      kill -0 "$exp" 2>/dev/null || { echo "the exporter died${cg:+: $(grep oom_kill "$cg/memory.oom_control" 2>/dev/null)}"; exit 1; }
      sleep 0.2
    done
    last=$(metric kafka_replication_last_refresh_timestamp_seconds)
    durations="$durations $(metric kafka_replication_refresh_duration_seconds)"
  done
  t1=$(ticks) s1=$(date +%s.%N)
  echo "refresh duration (s), $n refreshes:$durations"
  echo "exporter CPU while refreshing every $every (no scrapes): $(echo "scale=1; 100 * ($t1 - $t0) / $(getconf CLK_TCK) / ($s1 - $s0)" | bc)% of a core"
  echo "exporter peak RSS before any full scrape: $(peak_rss)"
}

# measure_scrapes BODY times three full scrapes in each encoding and leaves the last
# identity body in BODY.
measure_scrapes() {
  for enc in identity gzip; do
    for _ in 1 2 3; do
      curl -s -o /dev/null -H "Accept-Encoding: $enc" -w "full /metrics ($enc): %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$PORT/metrics"
    done
  done
  curl -s "127.0.0.1:$PORT/metrics" >"$1"
}
