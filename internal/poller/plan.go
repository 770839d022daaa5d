package poller

import (
	"slices"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// The second stage of a refresh: the plan, what to ask whom. One refresh
// costs O(brokers) requests, never O(partitions):
//
//	1 Metadata (all topics, asked of this sidecar's own broker when known;
//	   one more, to a bootstrap server, when that broker is silent for half
//	   the refresh's time)
//	1 DescribeConfigs (min.insync.replicas of every exported topic, batched)
//	≤1 ListOffsets LATEST per leader broker (HW of every partition it leads)
//	≤1 ListOffsets LATEST with replica id -2 per replica broker (its LEO of
//	   every exported partition it hosts)
//	1 ListPartitionReassignments (the exported partitions, named)
//	1 ApiVersions and 1 DescribeTopicPartitions per 2000 described partitions
//	   (ELR of the exported topics; fetch_elr.go)
//	≤1 DescribeLogDirs per broker, for no partition (its own broker in
//	   leader scope, every one in cluster scope; fetch_logdirs.go)
//
// HW is read for every partition, not only exported ones, so that the HW
// history survives a leadership move: a regression is most likely exactly
// when the leader changes.

// plannedPartition is one partition of the Metadata answer that passed the
// topic filter.
type plannedPartition struct {
	key      logparse.PartitionKey
	topicID  [16]byte
	replicas []int32
	leader   int32
	epoch    int32
	isr      int32 // ISR size: the ISR and offline replica lists are read by plan only
	export   bool
	// offlineDir are the replicas Metadata lists as offline whose broker is
	// alive (a failed log directory), of exported partitions; nil mostly.
	offlineDir []int32
	// leoBase is the first of this partition's LEO answer slots, one per
	// entry of replicas (offsets.leoAt); -1 when it is not exported.
	leoBase int32
}

// leoSlot is the slot of replica r's LEO answer, -1 when there is none.
// A replica listed twice answers in its first slot.
func (pp *plannedPartition) leoSlot(r int32) int {
	if pp.leoBase < 0 {
		return -1
	}
	j := slices.Index(pp.replicas, r)
	if j < 0 {
		return -1
	}
	return int(pp.leoBase) + j
}

// refreshPlan is what to ask whom. The per-broker lists hold indexes into
// parts.
type refreshPlan struct {
	parts        []plannedPartition
	hwByBroker   map[int32][]int32
	leoByBroker  map[int32][]int32
	leoSlots     int // LEO answer slots of the exported partitions
	exported     int
	configTopics []string
	controller   int32             // the controller Metadata named, for ListPartitionReassignments
	outOfISR     map[int32][]int32 // replicas missing from the ISR of exported partitions, by parts index
	// everyTopic: every topic is exported (cluster scope, no topic filter),
	// so a read of "all topics" is the shorter request.
	everyTopic bool
	refused    [NumRefusals]int // Metadata entries left out (plan_refuse.go)
	// logDirBrokers are the brokers asked for their log directories
	// (fetch_logdirs.go); nil when the read is off.
	logDirBrokers []int32
	// quorumSpeaks: this sidecar reads the metadata quorum, from
	// quorumBroker (quorum.go).
	quorumSpeaks bool
	quorumBroker int32
}

// plan applies the topic filter and the scope to a Metadata answer, and
// groups the offset requests by broker. brokers are md's; brokerID is this
// sidecar's broker (-1 = unknown).
func plan(md *sarama.MetadataResponse, brokers map[int32]string, brokerID int32, cluster bool, filter func(topic string) bool) refreshPlan {
	total := 0
	for _, t := range md.Topics {
		if t != nil {
			total += len(t.Partitions)
		}
	}
	// Sized up front: at 100k partitions, growing these by doubling was
	// most of a refresh's garbage.
	p := refreshPlan{
		parts:       make([]plannedPartition, 0, total),
		hwByBroker:  make(map[int32][]int32, len(brokers)),
		leoByBroker: make(map[int32][]int32, len(brokers)),
		controller:  md.ControllerID,
		outOfISR:    make(map[int32][]int32),
		everyTopic:  cluster && filter == nil,
	}
	perBroker := total/max(len(brokers), 1) + 1
	for id := range brokers {
		p.hwByBroker[id] = make([]int32, 0, perBroker)
	}
	// Offline partitions are exported by exactly one sidecar: the one of the
	// lowest live broker id.
	lowest := int32(-1)
	for id := range brokers {
		if lowest < 0 || id < lowest {
			lowest = id
		}
	}
	seen := newRefuser(len(md.Topics))
	for _, t := range md.Topics {
		if t == nil || t.Err != sarama.ErrNoError && len(t.Partitions) == 0 {
			continue
		}
		if !seen.topic(&p, t.Name, len(t.Partitions)) {
			continue
		}
		if filter != nil && !filter(t.Name) {
			continue
		}
		exportedTopic := false
		for _, pm := range t.Partitions {
			if pm == nil || !seen.partition(&p, pm.ID) {
				continue
			}
			pp := plannedPartition{
				key:      logparse.PartitionKey{Topic: t.Name, Partition: pm.ID},
				topicID:  t.Uuid,
				leader:   pm.Leader,
				epoch:    pm.LeaderEpoch,
				replicas: pm.Replicas,
				isr:      int32(len(pm.Isr)),
				leoBase:  -1,
			}
			idx := int32(len(p.parts))
			_, leaderLive := brokers[pm.Leader]
			online := pm.Leader >= 0 && leaderLive
			switch {
			case cluster:
				pp.export = true
			case online:
				pp.export = brokerID >= 0 && pm.Leader == brokerID
			default:
				pp.export = brokerID >= 0 && brokerID == lowest
			}
			if online {
				p.hwByBroker[pm.Leader] = append(p.hwByBroker[pm.Leader], idx)
			}
			if pp.export {
				exportedTopic = true
				p.exported++
				pp.leoBase = int32(p.leoSlots)
				p.leoSlots += len(pm.Replicas)
				if missing := outOfISR(pm.Replicas, pm.Isr); missing != nil {
					p.outOfISR[idx] = missing
				}
				for _, r := range pm.OfflineReplicas {
					if _, live := brokers[r]; live {
						pp.offlineDir = append(pp.offlineDir, r)
					}
				}
				if online {
					for _, r := range pm.Replicas {
						if _, live := brokers[r]; live && !slices.Contains(pm.OfflineReplicas, r) {
							if p.leoByBroker[r] == nil {
								p.leoByBroker[r] = make([]int32, 0, perBroker*len(pm.Replicas))
							}
							p.leoByBroker[r] = append(p.leoByBroker[r], idx)
						}
					}
				}
			}
			p.parts = append(p.parts, pp)
		}
		if exportedTopic {
			p.configTopics = append(p.configTopics, t.Name)
		}
	}
	return p
}

// outOfISR returns the replicas missing from the ISR, nil when none is.
func outOfISR(replicas, isr []int32) []int32 {
	var out []int32
	for _, r := range replicas {
		if !slices.Contains(isr, r) {
			out = append(out, r)
		}
	}
	return out
}
