package tail

import (
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// lineTime is the line time the exporter gives the follower (logstate's).
func lineTime(line []byte) (time.Time, bool) { return logparse.LineTime(line, time.UTC) }
