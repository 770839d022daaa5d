package poller

// Answers the poller could not use: Metadata entries it refused and topic
// configurations it could not read. Unknown is a state the snapshot
// carries, not an absence.

// Refusal is why a Metadata entry was left out of the plan.
type Refusal int

// Refusals and Unusables are in the order of their names: the order of
// their series.
const (
	// RefusedDuplicatePartition: a partition listed again under its topic.
	RefusedDuplicatePartition Refusal = iota
	// RefusedDuplicateTopic: a topic listed again in the same answer.
	RefusedDuplicateTopic
	// RefusedTopicName: a topic name outside Kafka's [a-zA-Z0-9._-]{1,249}.
	RefusedTopicName
	NumRefusals
)

var refusalNames = [NumRefusals]string{
	RefusedTopicName:          "invalid_topic_name",
	RefusedDuplicateTopic:     "duplicate_topic",
	RefusedDuplicatePartition: "duplicate_partition",
}

func (r Refusal) String() string { return refusalNames[r] }

// Unusable is why a resource of an admin answer could not be used.
type Unusable int

const (
	// UnusableAuthorization: the broker answered the resource with an
	// authorization error (no DescribeConfigs ACL on the topic).
	UnusableAuthorization Unusable = iota
	// UnusableError: the broker answered the resource with another error.
	UnusableError
	// UnusableValue: the value is not a positive integer.
	UnusableValue
	// UnusableMissing: the answer left the resource or its value out.
	UnusableMissing
	// UnusableRequestFailed: the whole request failed and no earlier value
	// is known.
	UnusableRequestFailed
	NumUnusable
)

var unusableNames = [NumUnusable]string{
	UnusableAuthorization: "authorization_failed",
	UnusableError:         "error",
	UnusableValue:         "invalid_value",
	UnusableMissing:       "missing",
	UnusableRequestFailed: "request_failed",
}

func (u Unusable) String() string {
	if u < 0 || u >= NumUnusable {
		return "none"
	}
	return unusableNames[u]
}

// MinISRSource says where a topic's min.insync.replicas came from.
type MinISRSource int

const (
	// MinISRSourceNone: unknown, the partitions' min ISR series are absent.
	MinISRSourceNone MinISRSource = iota
	// MinISRSourceTopic: the topic's own DescribeConfigs answer (its
	// override, else the default Kafka applies to it).
	MinISRSourceTopic
	// MinISRSourceBrokerDefault: the topic's answer was unusable; the
	// answering broker's own min.insync.replicas stands in for it.
	MinISRSourceBrokerDefault
)

// MinISRStatus is what the poller knows of the topics' min.insync.replicas
// after a refresh.
type MinISRStatus struct {
	// Unknown counts exported topics without a min ISR, by why their own
	// answer was unusable.
	Unknown [NumUnusable]int
	// BrokerDefault counts exported topics whose own answer was unusable and
	// that use the broker's default instead, by why.
	BrokerDefault [NumUnusable]int
	// AnswerErrors counts topic answers that could not be used, since start.
	AnswerErrors [NumUnusable]uint64
}
