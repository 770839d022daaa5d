package poller

import (
	"errors"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// TieringConfig is the flags of the tiered-storage read (fetch_tiering.go,
// build_tiering.go). Off by default: it is requests a replication sidecar
// does not otherwise make.
type TieringConfig struct {
	// Enabled: ask remote.storage.enable of the exported topics and read the
	// tiering offsets of the partitions of the topics that have it.
	Enabled bool
	// StallThreshold is how long the latest tiered offset may stand still
	// while offsets it could copy wait before tiering counts as stalled.
	StallThreshold time.Duration
}

// addTieringFlags registers the tiered-storage flags on cmd.
func addTieringFlags(cmd *kingpin.CmdClause, c *TieringConfig) {
	cmd.Flag("collector.tiered-storage",
		"Read tiered storage (KIP-405) of the exported topics with remote.storage.enable=true: each partition's latest tiered and earliest local offset "+
			"(ListOffsets -5 and -4 to each leader, Kafka 3.9+) and whether a stuck high watermark or last stable offset stops its tiering.").
		Default("false").BoolVar(&c.Enabled)
	// 10m: well above the broker's copy task period (remote.log.manager.task.interval.ms,
	// 30s by default) and the upload of a 1 GiB segment, and far below the hours
	// a disk takes to fill when local retention stops.
	cmd.Flag("collector.tiered-storage.stall-threshold",
		"How long the latest tiered offset of a partition may stay still while offsets below the high watermark (or last stable offset) "+
			"wait to be copied before tiering counts as stalled. Above remote.log.manager.task.interval.ms and the upload time of one segment.").
		Default("10m").DurationVar(&c.StallThreshold)
}

// validate checks that tiering is read only where the admin API is, and
// its stall threshold.
func (c *TieringConfig) validate(servers bool) error {
	if !c.Enabled {
		return nil
	}
	if !servers {
		return errors.New("--collector.tiered-storage needs --kafka.server")
	}
	if c.StallThreshold <= 0 {
		return errors.New("--collector.tiered-storage.stall-threshold must be positive")
	}
	return nil
}
