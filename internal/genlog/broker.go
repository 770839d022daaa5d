package genlog

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// The files of a broker's log, as BrokerLine.File numbers them.
const (
	ServerLog      = 0
	StateChangeLog = 1
)

// BrokerLine is one record of a broker's logs (with its continuation lines,
// '\n'-terminated), in the order the broker wrote them.
type BrokerLine struct {
	File int
	Text string
}

// BrokerOptions shape a generated timeline.
type BrokerOptions struct {
	Records    int    // records to write
	Partitions int    // partitions; 0 means 6
	Seed       uint64 // the same seed gives the same timeline
	// FutureStamp writes one HW update stamped in the year 9999, halfway.
	FutureStamp bool
}

// Broker writes the timeline of broker 1's server.log and state-change.log:
// leadership moving away and back (state-change.log), HW progress, ISR
// shrinks and expansions, truncations at the high watermark after losing
// leadership, NotEnoughReplicas rejections with their continuation line,
// log directories failing and the broker starting again, and unrelated
// lines. Every record has its own millisecond, so the
// order across files is the order of the timestamps. A replication invariant
// holds throughout: a reader that applies the two files in any other order
// than by time sees violations that are not there.
func Broker(o BrokerOptions) []BrokerLine {
	if o.Partitions <= 0 {
		o.Partitions = 6
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	t := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	type part struct {
		name           string
		leader         bool
		epoch, version int64
		hw             int64
		isr            []int32
		everSeen       bool
	}
	parts := make([]*part, o.Partitions)
	for i := range parts {
		parts[i] = &part{name: fmt.Sprintf("orders-%d", i), epoch: 1, version: 1, isr: []int32{1, 2, 3}}
	}
	var out []BrokerLine
	stamp := func() string {
		t = t.Add(time.Millisecond)
		return t.Format("2006-01-02 15:04:05,000")
	}
	emit := func(file int, format string, args ...any) {
		out = append(out, BrokerLine{File: file, Text: fmt.Sprintf("["+stamp()+"] "+format+"\n", args...)})
	}
	ids := func(isr []int32) string {
		s := ""
		for i, id := range isr {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprint(id)
		}
		return s
	}
	lead := func(p *part) {
		p.leader, p.epoch, p.version = true, p.epoch+1, p.version+1
		p.isr = []int32{1, 2, 3}
		emit(StateChangeLog, "INFO [Broker id=1] Leader %s with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch %d from offset "+
			"%d with partition epoch %d, high watermark %d, ISR [%s], adding replicas [] and removing replicas [] . "+
			"Previous leader None and previous leader epoch was -1. (state.change.logger)",
			p.name, p.epoch, p.hw, p.version, p.hw, ids(p.isr))
	}
	follow := func(p *part) {
		p.leader, p.epoch, p.version = false, p.epoch+1, p.version+1
		emit(StateChangeLog, "INFO [Broker id=1] Follower %s starts at leader epoch %d from offset %d with partition epoch %d and high "+
			"watermark %d. Current leader is 2. Previous leader Some(1) and previous leader epoch was %d. "+
			"(state.change.logger)",
			p.name, p.epoch, p.hw, p.version, p.hw, p.epoch-1)
		emit(ServerLog, "INFO [UnifiedLog partition=%s, dir=/var/lib/kafka/data] Truncating to offset %d (kafka.log.UnifiedLog)", p.name, p.hw)
	}
	future := o.FutureStamp
	for len(out) < o.Records {
		p := parts[rng.IntN(len(parts))]
		if !p.leader {
			if rng.IntN(4) == 0 || !p.everSeen {
				p.everSeen = true
				lead(p)
			} else {
				emit(ServerLog, "INFO [ReplicaFetcherThread-0-2]: Fetching from broker 2 for %s (kafka.server.ReplicaFetcherThread)", p.name)
			}
			continue
		}
		switch r := rng.IntN(20); {
		case r < 11:
			from := p.hw
			p.hw += 1 + int64(rng.IntN(50))
			if future && len(out) >= o.Records/2 {
				future = false
				text := fmt.Sprintf("[9999-01-01 00:00:00,000] DEBUG [Partition %s broker=1] High watermark updated from (offset=%d, "+
					"segment=[0:1]) to (offset=%d, segment=[0:2]) (kafka.cluster.Partition)\n", p.name, from, p.hw)
				out = append(out, BrokerLine{File: ServerLog, Text: text})
				continue
			}
			emit(ServerLog, "DEBUG [Partition %s broker=1] High watermark updated from (offset=%d, segment=[0:1]) to (offset=%d, "+
				"segment=[0:2]) (kafka.cluster.Partition)", p.name, from, p.hw)
		case r < 13 && len(p.isr) > 1:
			gone := p.isr[len(p.isr)-1]
			from := ids(p.isr)
			p.isr, p.version = p.isr[:len(p.isr)-1], p.version+1
			emit(ServerLog, "INFO [Partition %s broker=1] Shrinking ISR from %s to %s. Leader: (highWatermark: %d, endOffset: %d). Out of "+
				"sync replicas: (brokerId: %d, endOffset: %d, lastCaughtUpTimeMs: 1764496801004). (kafka.cluster.Partition)",
				p.name, from, ids(p.isr), p.hw, p.hw+1, gone, p.hw)
			emit(ServerLog, "INFO [Partition %s broker=1] ISR updated to %s  and version updated to %d (kafka.cluster.Partition)", p.name, ids(p.isr), p.version)
		case r < 15 && len(p.isr) < 3:
			p.isr, p.version = append(p.isr, int32(len(p.isr)+1)), p.version+1
			emit(ServerLog, "INFO [Partition %s broker=1] ISR updated to %s  and version updated to %d (kafka.cluster.Partition)", p.name, ids(p.isr), p.version)
		case r == 15 && len(p.isr) == 1:
			emit(ServerLog, "ERROR [ReplicaManager broker=1] Error processing append operation on partition %s "+
				"(kafka.server.ReplicaManager)\norg.apache.kafka.common.errors.NotEnoughReplicasException: The size of the "+
				"current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition %s, live replica(s) "+
				"broker.id are : Set(1)", p.name, p.name)
		case r == 16:
			follow(p)
		case len(out)%211 == 0:
			// A restart's first line: every directory is served again.
			emit(ServerLog, "INFO [BrokerServer id=1] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)")
		case len(out)%97 == 0:
			emit(ServerLog, "WARN [ReplicaManager broker=1] Stopping serving replicas in dir /var/lib/kafka/data-%d with uuid "+
				"Optional[7E_aR-ZDcublVgBOR3kSyw] because the log directory has failed. (kafka.server.ReplicaManager)", len(out)%3)
		default:
			emit(ServerLog, "INFO [LocalLog partition=%s, dir=/var/lib/kafka/data] Rolled new log segment at offset %d (kafka.log.LocalLog)", p.name, p.hw)
		}
	}
	return out
}
