package collector

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// requestKind is the `request` label of the admin request error counter.
type requestKind int

const (
	reqMetadata requestKind = iota
	reqDescribeConfigs
	reqListOffsets
	reqListOffsetsLEO
	reqAlterLogLevel
	numRequestKinds
)

var requestNames = [numRequestKinds]string{
	reqMetadata:        "metadata",
	reqDescribeConfigs: "describe_configs",
	reqListOffsets:     "list_offsets",
	reqListOffsetsLEO:  "list_offsets_leo",
	reqAlterLogLevel:   "alter_log_level",
}

// disagreementFields are the `field` label values, in counter order.
var disagreementFields = [2]string{fieldISR, fieldLeaderEpoch}

// adminCounters are the poller's own counters; the refresh goroutine owns
// them and each snapshot carries a copy.
type adminCounters struct {
	requestErrors [numRequestKinds]uint64
	disagreements [len(disagreementFields)]uint64
}

// adminSnapshot is everything Collect renders. It is immutable once
// published.
type adminSnapshot struct {
	up          bool
	lastSuccess time.Time // zero until the first successful refresh
	duration    time.Duration
	counts      adminCounters
	topics      []topicSample // sorted by name
	// ordered is every partition in the order the registry sorts series
	// (label values compared as strings: partition, then topic). Fed in
	// that order, its sort is linear instead of dominating the scrape.
	ordered []*partitionSample
}

type topicSample struct {
	name         string
	minISRConfig int // configured min.insync.replicas; 0 = unknown
	partitions   []partitionSample
}

// Its fields are ordered so as to waste no padding: a snapshot holds 100k.
type partitionSample struct {
	topic       string
	partitionID string // partition, formatted once
	lags        []replicaLag
	lastAdvance time.Time // zero = no HW reading yet
	replicas    int
	isr         int   // joined with the log view: the fresher wins
	minISR      int   // effective: min(config, replicas); 0 = unknown
	leaderEpoch int64 // joined with the log view
	hw, leo     int64
	regressions uint64
	partition   int32
	leader      int32 // -1 = offline
	hwKnown     bool
	leoKnown    bool
	stalled     bool
}

type replicaLag struct {
	replica string // broker id, formatted once
	lag     int64
}

func (p *partitionSample) underReplicated() bool { return p.isr < p.replicas }
func (p *partitionSample) underMinISR() bool     { return p.minISR > 0 && p.isr < p.minISR }
func (p *partitionSample) atMinISR() bool {
	return p.minISR > 0 && p.isr == p.minISR && p.replicas > p.minISR
}

// build turns one refresh's answers into a snapshot, feeding the HW tracker
// for every partition (exported or not) along the way.
func (a *Admin) build(p refreshPlan, got fetched, mdAt time.Time) *adminSnapshot {
	got = got.indexed(&p)
	now := a.now()
	count := func(field string) {
		for i, f := range disagreementFields {
			if f == field {
				a.counts.disagreements[i]++
			}
		}
	}

	// The snapshot's partitions and lags are two allocations, sized from
	// the plan, that the topics' and partitions' slices share: growing them
	// by append was the largest garbage of a 100k-partition refresh.
	snap := &adminSnapshot{}
	topicOf := make(map[string]int)
	var perTopic []int
	lagCap := 0
	for i := range p.parts {
		pp := &p.parts[i]
		if !pp.export {
			continue
		}
		t, ok := topicOf[pp.key.topic]
		if !ok {
			t = len(snap.topics)
			topicOf[pp.key.topic] = t
			snap.topics = append(snap.topics, topicSample{name: pp.key.topic, minISRConfig: a.minISR[pp.key.topic]})
			perTopic = append(perTopic, 0)
		}
		perTopic[t]++
		lagCap += max(len(pp.replicas)-1, 0)
	}
	all := make([]partitionSample, p.exported)
	off := 0
	for t, n := range perTopic {
		snap.topics[t].partitions = all[off : off : off+n]
		off += n
	}
	lags := make([]replicaLag, 0, lagCap)

	for i := range p.parts {
		pp := &p.parts[i]
		var (
			st      hwState
			hwKnown bool
		)
		if ans := got.hwAt[i]; ans.ok {
			epoch := pp.epoch
			if ans.leaderEpoch >= 0 {
				epoch = ans.leaderEpoch
			}
			v := a.tracker.observe(pp.key, hwObservation{topicID: pp.topicID, hw: ans.offset, leaderEpoch: epoch}, now, a.gen)
			if v.regressed {
				a.logger.Debug("High watermark went backwards",
					"topic", pp.key.topic, "partition", pp.key.partition,
					"from", v.prevHW, "to", ans.offset,
					"leader_epoch_before", v.prevEpoch, "leader_epoch_after", epoch)
			}
			st, hwKnown = hwState{hw: ans.offset, lastAdvance: v.lastAdvance, regressions: v.regressions}, true
		} else {
			// The leader did not answer (or there is none): keep the
			// last good HW, and keep its history alive.
			a.tracker.touch(pp.key, a.gen)
			st, hwKnown = a.tracker.last(pp.key, pp.topicID)
		}
		if !pp.export {
			continue
		}

		ts := &snap.topics[topicOf[pp.key.topic]]
		isr, epoch := a.join.join(pp.key, int(pp.isr), int64(pp.epoch), mdAt, count)
		s := partitionSample{
			topic:       pp.key.topic,
			partition:   pp.key.partition,
			partitionID: a.ids.get(pp.key.partition),
			replicas:    len(pp.replicas),
			isr:         isr,
			leader:      pp.leader,
			leaderEpoch: epoch,
			hw:          st.hw,
			hwKnown:     hwKnown,
			lastAdvance: st.lastAdvance,
			regressions: st.regressions,
		}
		if s.leader < 0 {
			s.leader = -1
		}
		if ts.minISRConfig > 0 {
			s.minISR = min(ts.minISRConfig, s.replicas)
		}
		if l := pp.leoSlot(pp.leader); l >= 0 && got.leoAt[l].ok {
			s.leo, s.leoKnown = got.leoAt[l].offset, true
			from := len(lags)
			for _, r := range pp.replicas {
				if r == pp.leader {
					continue
				}
				if f := pp.leoSlot(r); f >= 0 && got.leoAt[f].ok {
					// The follower is asked a moment apart from the leader
					// and can be ahead by then; lag is never negative.
					lags = append(lags, replicaLag{
						replica: a.ids.get(r),
						lag:     max(s.leo-got.leoAt[f].offset, 0),
					})
				}
			}
			if len(lags) > from {
				s.lags = lags[from:len(lags):len(lags)]
			}
		}
		s.stalled = s.hwKnown && s.leoKnown && a.tracker.stalled(s.underMinISR(), s.hw, s.leo, s.lastAdvance, now)
		ts.partitions = append(ts.partitions, s)
	}

	for i := range snap.topics {
		ts := &snap.topics[i]
		slices.SortFunc(ts.partitions, func(x, y partitionSample) int { return int(x.partition) - int(y.partition) })
	}
	slices.SortFunc(snap.topics, func(x, y topicSample) int { return strings.Compare(x.name, y.name) })
	snap.ordered = make([]*partitionSample, 0, p.exported)
	for i := range snap.topics {
		for j := range snap.topics[i].partitions {
			snap.ordered = append(snap.ordered, &snap.topics[i].partitions[j])
		}
	}
	slices.SortFunc(snap.ordered, func(x, y *partitionSample) int {
		if c := strings.Compare(x.partitionID, y.partitionID); c != 0 {
			return c
		}
		return strings.Compare(x.topic, y.topic)
	})
	return snap
}

// idStrings formats partition and broker ids once for all refreshes: they
// are the snapshot's label values, and there are few distinct ones (a
// partition id is below the topic's partition count), so a slice indexed by
// id holds them all. The label pairs of the Collect path are not kept here:
// at 100k partitions they were ~110 MB held between refreshes, and the
// production /metrics (the direct text path) never reads them.
type idStrings []string

// maxCachedID bounds the slice; a larger id is formatted on each call.
const maxCachedID = 1 << 16

func (c *idStrings) get(id int32) string {
	if id >= 0 && int(id) < len(*c) {
		return (*c)[id]
	}
	if id < 0 || id >= maxCachedID {
		return strconv.FormatInt(int64(id), 10)
	}
	for n := len(*c); n <= int(id); n++ {
		*c = append(*c, strconv.Itoa(n))
	}
	return (*c)[id]
}
