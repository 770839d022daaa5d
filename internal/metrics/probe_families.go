package metrics

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"

// The multi-target half's own health (--probe.config-file): whether its
// configuration loaded, and how many clusters are being polled for /probe.
var (
	probeReloadSuccessfulFamily = exposition.NewFamily("probe_config_last_reload_successful",
		"Whether the last load of --probe.config-file succeeded (1) or failed and the previous configuration is still in use (0).",
		exposition.Gauge).
		WithDoc("Loaded at start (a bad file stops the exporter), then again on SIGHUP and when the file's contents change; a failed reload " +
			"is logged at WARN once and keeps the clusters of the last good load.")
	probeReloadTimestampFamily = exposition.NewFamily("probe_config_last_reload_success_timestamp_seconds",
		"When --probe.config-file was last loaded successfully, in seconds since the epoch.",
		exposition.Gauge)
	probeTargetsFamily = exposition.NewFamily("probe_config_targets",
		"Clusters named in the loaded --probe.config-file.",
		exposition.Gauge)
	probeActiveFamily = exposition.NewFamily("probe_targets_active",
		"Clusters with a running admin poller: probed within --probe.idle-timeout.",
		exposition.Gauge)
	probeRefusedFamily = exposition.NewFamily("probe_requests_refused_total",
		"Requests to /probe refused, by reason.",
		exposition.Counter, "reason").
		WithDoc("`unknown_target`: the target is not a cluster of --probe.config-file (nothing is dialed); `max_targets`: " +
			"--probe.max-targets clusters are already active, so the target's poller was not started.")
)

// probeFamilies lists the multi-target half's families, for Families.
var probeFamilies = []*exposition.Family{
	probeReloadSuccessfulFamily, probeReloadTimestampFamily, probeTargetsFamily, probeActiveFamily, probeRefusedFamily,
}

// ProbeRefusal is why a /probe request was refused.
type ProbeRefusal uint8

// The reasons of kafka_replication_probe_requests_refused_total.
const (
	ProbeUnknownTarget ProbeRefusal = iota
	ProbeMaxTargets
	NumProbeRefusals
)

func (r ProbeRefusal) String() string {
	if r == ProbeMaxTargets {
		return "max_targets"
	}
	return "unknown_target"
}

// ProbeStats is the multi-target half's state at one scrape.
type ProbeStats struct {
	ReloadSuccessful bool
	LastSuccess      float64 // seconds since the epoch; 0: never
	Targets, Active  int
	Refused          [NumProbeRefusals]uint64
}

// ProbeTables renders the multi-target half's state (a TableSource).
func ProbeTables(stats func() ProbeStats) exposition.TableSource {
	return func() ([]*exposition.Table, func()) {
		st := stats()
		one := func(f *exposition.Family, v float64) *exposition.Table {
			return &exposition.Table{Rows: 1, Columns: []exposition.Column{
				{Family: f, Value: func(int) (float64, bool) { return v, true }},
			}}
		}
		return []*exposition.Table{
			one(probeReloadSuccessfulFamily, b2f(st.ReloadSuccessful)),
			one(probeReloadTimestampFamily, st.LastSuccess),
			one(probeTargetsFamily, float64(st.Targets)),
			one(probeActiveFamily, float64(st.Active)),
			{
				Rows:   int(NumProbeRefusals),
				Labels: func(row int, values []string) { values[0] = ProbeRefusal(row).String() },
				Columns: []exposition.Column{
					{Family: probeRefusedFamily, Value: func(row int) (float64, bool) { return float64(st.Refused[row]), true }},
				},
			},
		}, nil
	}
}
