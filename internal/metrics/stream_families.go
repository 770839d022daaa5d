package metrics

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"

// The log stream's progress and the file events that do not stop it.
var (
	fileBehindFamily = exposition.NewFamily("log_file_behind_bytes",
		"Bytes of the file, and of files rotated before it, not read yet; 0 once read to its end.",
		exposition.Gauge, "file")
	filePartialTruncationsFamily = exposition.NewFamily("log_file_partial_truncations_total",
		"Times the live file was cut shorter but kept its beginning; reading went on at its new end.",
		exposition.Counter, "file").
		WithDoc("Lines between the new end and where reading stood are lost; nothing is read twice. Each is also logged at WARN.")
	fileFutureTimestampsFamily = exposition.NewFamily("log_future_timestamps_total",
		"Events stamped more than an hour past both their file's previous event and the wall clock, ordered as that previous event.",
		exposition.Counter, "file").
		WithDoc("Within one file, file order is the truth: such a stamp is not allowed to hold back the file's later lines.")
	fileSkippedEventsFamily = exposition.NewFamily("log_events_skipped_total",
		"Events read again after a restart that could not resume at its saved position, not applied again: they were applied before the stop.",
		exposition.Counter, "file").
		WithDoc("Such a restart (the file's beginning changed, or the saved file matches no file) reads the file from its beginning; " +
			"every record up to the first event stamped after the last one applied before the stop is skipped. Logged at WARN with the count.")
	logCaughtUpFamily = exposition.NewFamily("log_caught_up",
		"1 once every log file has been read to its end since start: the backlog found at start is applied.",
		exposition.Gauge)
	logBehindSecondsFamily = exposition.NewFamily("log_catchup_behind_seconds",
		"How far the log time of the last applied event is behind the wall clock while a file has more to read; 0 once every file was read to its end.",
		exposition.Gauge)
)

func streamFamilies() []*exposition.Family {
	return []*exposition.Family{
		fileBehindFamily, filePartialTruncationsFamily, fileFutureTimestampsFamily, fileSkippedEventsFamily,
		logCaughtUpFamily, logBehindSecondsFamily,
	}
}
