package poller

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"

// Part of the plan: what of a Metadata answer never becomes a series. A
// topic name Kafka could not have created (the log half's rule,
// logparse.ValidTopicName) and a topic or partition listed twice are left
// out and counted, so that a broken or hostile answer cannot make an empty,
// huge or duplicate label.

// refuser remembers what the plan has taken from one Metadata answer.
type refuser struct {
	topics map[string]struct{}
	// The current topic's partitions: ids 0..n-1 (every sane answer) in
	// dense, any other in sparse.
	dense  []bool
	sparse map[int32]struct{}
}

func newRefuser(topics int) *refuser {
	return &refuser{topics: make(map[string]struct{}, topics)}
}

// topic reports whether the plan takes topic name with its partitions
// partitions listed, and starts them.
func (r *refuser) topic(p *refreshPlan, name string, partitions int) bool {
	if !logparse.ValidTopicName(name) {
		p.refused[RefusedTopicName]++
		return false
	}
	if _, dup := r.topics[name]; dup {
		p.refused[RefusedDuplicateTopic]++
		return false
	}
	r.topics[name] = struct{}{}
	if cap(r.dense) < partitions {
		r.dense = make([]bool, partitions)
	}
	r.dense = r.dense[:partitions]
	clear(r.dense)
	clear(r.sparse)
	return true
}

// partition reports whether the plan takes partition id of the current topic.
func (r *refuser) partition(p *refreshPlan, id int32) bool {
	if id >= 0 && int(id) < len(r.dense) {
		if r.dense[id] {
			p.refused[RefusedDuplicatePartition]++
			return false
		}
		r.dense[id] = true
		return true
	}
	if r.sparse == nil {
		r.sparse = make(map[int32]struct{})
	}
	if _, dup := r.sparse[id]; dup {
		p.refused[RefusedDuplicatePartition]++
		return false
	}
	r.sparse[id] = struct{}{}
	return true
}
