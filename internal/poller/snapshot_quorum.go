package poller

// QuorumUnknown is why the KRaft metadata quorum is not known this refresh.
type QuorumUnknown int

const (
	QuorumKnown       QuorumUnknown = iota // answered with a leader
	QuorumDenied                           // CLUSTER_AUTHORIZATION_FAILED
	QuorumUnsupported                      // ZooKeeper mode, or a broker without DescribeQuorum (API 55)
	QuorumNoLeader                         // answered with LeaderId -1
	QuorumError                            // any other error code, or the transport
	QuorumTimeout                          // no answer within the refresh's deadline
	NumQuorumUnknown
)

var quorumUnknownNames = [NumQuorumUnknown]string{
	QuorumDenied:      "denied",
	QuorumUnsupported: "unsupported",
	QuorumNoLeader:    "no_leader",
	QuorumError:       "error",
	QuorumTimeout:     "timeout",
}

func (u QuorumUnknown) String() string { return quorumUnknownNames[u] }

// Quorum is the KRaft metadata log (__cluster_metadata) as the active
// controller described it. Its times are on the leader's clock. Only the
// sidecar that speaks for the cluster has one (quorum.go).
type Quorum struct {
	// Unknown is why the rest is not known; QuorumKnown: every field is valid.
	Unknown     QuorumUnknown
	LeaderID    int32
	LeaderEpoch int32
	// HighWatermark is -1 while a new leader has not committed yet.
	HighWatermark int64
	// HWRegressions counts, since start, the answers whose high watermark
	// was below the one before (both known).
	HWRegressions uint64
	Voters        int // CurrentVoters
	// Replicas are the voters, then the observers, each by node id.
	Replicas []QuorumReplica
	// BrokersMissing are the brokers in Metadata that are neither voters
	// nor observers: the leader drops an observer after 300 s without a fetch.
	BrokersMissing int
}

// QuorumReplica is one voter or observer of the metadata log.
type QuorumReplica struct {
	Node     int32
	Observer bool // false: a voter
	// LogEndOffset and LagRecords (leader LEO minus this one) are valid
	// when LEOKnown.
	LogEndOffset, LagRecords int64
	LEOKnown                 bool
	// LagSeconds is the leader's now minus this replica's last caught-up
	// time; LastFetchAgeSeconds the leader's now minus its last fetch
	// (never for the leader). DescribeQuorum v1 and up only.
	LagSeconds, LastFetchAgeSeconds float64
	LagKnown, FetchKnown            bool
}
