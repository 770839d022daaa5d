package poller

// StableOffset is one exported partition's last stable offset: how far
// read_committed consumers can read (build_lso.go).
type StableOffset struct {
	Topic     string
	Partition int32
	LSO       int64
	// HWKnown: the leader answered the HW in the same refresh, so LagSeconds
	// and Stalled are decided.
	HWKnown bool
	// LagSeconds is how long read_committed consumers have been held back
	// at the LSO: now minus the time the HW passed it (from the HW history);
	// 0 when the LSO is at the HW.
	LagSeconds float64
	// Stalled: the LSO is below the HW and has been for
	// --collector.last-stable-offset.stall-threshold, i.e. a transaction
	// has been open that long (hanging, or longer than any client's
	// transaction timeout should allow).
	Stalled bool
}

// GroupUnread is why a listed consumer group was not read in a refresh.
type GroupUnread int

const (
	// GroupUnreadErrorCode: its coordinator answered its OffsetFetch with an
	// error code for it (COORDINATOR_LOAD_IN_PROGRESS, not authorized, …) or
	// left it out.
	GroupUnreadErrorCode GroupUnread = iota
	// GroupUnreadNoAnswer: the request for it went unanswered in time or
	// failed.
	GroupUnreadNoAnswer
	// GroupUnreadRefreshEnded: the refresh ended before its request was
	// answered, with time left in the request's own deadline: more group
	// requests than the refresh has time for.
	GroupUnreadRefreshEnded
	NumGroupUnread
)

var groupUnreadNames = [NumGroupUnread]string{
	GroupUnreadErrorCode:    "error_code",
	GroupUnreadNoAnswer:     "no_answer",
	GroupUnreadRefreshEnded: "refresh_ended",
}

func (u GroupUnread) String() string { return groupUnreadNames[u] }

// ShareGroupSupport is whether a broker could be asked for the share groups
// it coordinates.
type ShareGroupSupport int

const (
	// ShareGroupsKnown: it listed its share groups.
	ShareGroupsKnown ShareGroupSupport = iota
	// ShareGroupsUnsupported: it has no share groups to list: before Kafka
	// 4.1 (no DescribeShareGroupOffsets) or with share.version 0.
	ShareGroupsUnsupported
	// ShareGroupsRequestFailed: its ApiVersions or ListGroups failed.
	ShareGroupsRequestFailed
	NumShareGroupSupport
)

var shareGroupSupportNames = [NumShareGroupSupport]string{
	ShareGroupsKnown:         "known",
	ShareGroupsUnsupported:   "unsupported",
	ShareGroupsRequestFailed: "request_failed",
}

func (s ShareGroupSupport) String() string { return shareGroupSupportNames[s] }

// ConsumerGroup is one consumer group read by the consumer-group collector
// (--collector.consumer-groups), or one share group
// (--collector.share-groups; Snapshot.ShareGroups).
type ConsumerGroup struct {
	Name    string
	State   string // as Kafka spells it (Stable, Empty, …); "" when DescribeGroups did not answer for it
	Members int
	// Partitions are the exported partitions the group has committed an
	// offset for, sorted by topic, then partition.
	Partitions []GroupPartition
}

// GroupPartition is a consumer group's position on one exported partition,
// split into the consumer's share of the lag and replication's.
type GroupPartition struct {
	Topic     string
	Partition int32
	Committed int64 // the committed offset (OffsetFetch); for a share group, the share-partition start offset (DescribeShareGroupOffsets)
	// LagToHW is HW − committed, never negative: records the group could
	// read and has not (the consumer's share). Valid when the partition's
	// HW is known.
	LagToHW int64
	HWKnown bool
	// AboveHW is LEO − HW, never negative: records written that no consumer
	// can read yet (replication's share). Valid when AboveHWKnown.
	AboveHW      int64
	AboveHWKnown bool
	// StarvedByReplication: the group is caught up to the HW (its committed
	// offset at the HW, or within the HW's last advance) while the
	// partition's HW is stalled with records above it (Partition.Stalled).
	StarvedByReplication bool
	// LagSeconds is now minus the time the HW was at the committed offset,
	// from the exporter's own HW history (hwhistory.go); 0 when caught up.
	// LagSecondsKnown is false while the history has no reading yet.
	LagSeconds      float64
	LagSecondsKnown bool
	// Behind: LagSeconds is at least the stall threshold, the group's
	// share of an unhealthy state (--collector.partition-series=unhealthy).
	Behind bool
}
