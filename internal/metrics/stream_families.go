package metrics

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"

// The log stream's progress (the file events that do not stop it are
// columns of fileColumns, in families.go).
var (
	logCaughtUpFamily = exposition.NewFamily("log_caught_up",
		"1 once every log file has been read to its end since start: the backlog found at start is applied.",
		exposition.Gauge)
	logBehindSecondsFamily = exposition.NewFamily("log_catchup_behind_seconds",
		"How far the log time of the last applied event is behind the wall clock while a file has more to read; 0 once every file was read to its end.",
		exposition.Gauge)
)

// streamFamilies are the stream's families, for Families.
var streamFamilies = []*exposition.Family{logCaughtUpFamily, logBehindSecondsFamily}
