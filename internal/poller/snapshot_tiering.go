package poller

// The result's tiered storage (--collector.tiered-storage): per partition of
// a topic with remote.storage.enable=true, what its leader says of its
// tiering, and whether a stuck replication stops it.

// TieringCause is why tiering of a partition is stalled.
type TieringCause int

const (
	TieringNotStalled TieringCause = iota
	// TieringHWStalled: the partition's high watermark is stalled: nothing
	// above it can be copied.
	TieringHWStalled
	// TieringLSOStuck: a transaction left open holds the last stable offset,
	// and the broker copies nothing above it.
	TieringLSOStuck
	// TieringRemote: replication is not in the way; the remote storage is
	// (copy errors, a remote.copy.lag.* delay), or the offsets waiting are
	// in a segment that has not rolled yet.
	TieringRemote
	NumTieringCauses
)

var tieringCauseNames = [NumTieringCauses]string{
	TieringHWStalled: "hw_stalled",
	TieringLSOStuck:  "lso_stuck",
	TieringRemote:    "remote",
}

func (c TieringCause) String() string { return tieringCauseNames[c] }

// TieringUnknown is why a tiered partition's offsets are unknown this refresh.
type TieringUnknown int

// In the order of their names: the order of their series.
const (
	TieringKnown TieringUnknown = iota
	// TieringRequestFailed: the leader's ApiVersions or ListOffsets failed
	// or went unanswered, or the partition has no leader.
	TieringRequestFailed
	// TieringUnsupported: the leader lists ListOffsets below v9 (before
	// Kafka 3.9): it cannot tell the latest tiered offset.
	TieringUnsupported
	// TieringUnusable: the leader answered the partition with an error, or
	// left it out.
	TieringUnusable
	NumTieringUnknown
)

var tieringUnknownNames = [NumTieringUnknown]string{
	TieringKnown:         "known",
	TieringRequestFailed: "request_failed",
	TieringUnsupported:   "unsupported",
	TieringUnusable:      "unusable",
}

func (u TieringUnknown) String() string { return tieringUnknownNames[u] }

// PartitionTiering is one tiered partition's tiering, plain data.
type PartitionTiering struct {
	// Unknown is why the offsets below are not known; TieringKnown when
	// they are.
	Unknown TieringUnknown
	// LatestTiered is the highest offset copied to remote storage
	// (ListOffsets -5), -1 while nothing is; LocalStart the first offset
	// still on the leader's disk (ListOffsets -4).
	LatestTiered, LocalStart int64
	// Lag is how many offsets below the LSO (when read) or the HW are not
	// in remote storage: the bound minus LatestTiered+1, never negative.
	// It includes the active segment, which cannot be copied yet. Valid
	// when LagKnown: the offsets and the bound were answered.
	Lag      int64
	LagKnown bool
	// Stalled: LatestTiered has not moved for the stall threshold while Lag
	// is above 0 and, unless replication is stuck, the HW moved on.
	Stalled bool
	Cause   TieringCause // TieringNotStalled unless Stalled
}

// Known reports whether the leader answered the partition's tiering offsets.
func (t *PartitionTiering) Known() bool { return t.Unknown == TieringKnown }
