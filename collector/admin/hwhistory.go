package admin

import (
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// hwHistory keeps, per partition, the last hwSamples distinct high
// watermarks the poller read and when, so that a committed offset can be
// turned into a time: when the HW was there (lag in seconds, as
// kafka-lag-exporter does, but from the HW readings the poller takes
// anyway). Memory per partition is fixed. Kept only while consumer groups
// are read.
type hwHistory struct {
	parts map[logparse.PartitionKey]*hwRing
	// caughtUpWithin is how far behind the HW's last advance a group's
	// committed offset may be and the group still count as caught up
	// (caughtUp): a refresh, the latest the advance can be read,
	// plus caughtUpCommitGrace.
	caughtUpWithin time.Duration
}

// caughtUpCommitGrace covers the commits a group that reads everything still
// has not made when the HW stops: consumers commit on a timer (Java's
// auto.commit.interval.ms is 5s), and the commits that fall in the stall
// fail when the offsets topic is under min ISR too.
const caughtUpCommitGrace = 10 * time.Second

// hwSamples bounds the history of one partition.
const hwSamples = 64

// hwSample is one distinct HW and the first and last refresh that read it:
// the HW reached offset after the previous sample's last reading and at or
// before first.
type hwSample struct {
	offset      int64
	first, last int64 // unix nanoseconds
}

// hwRing is one partition's samples, oldest first from head. s grows to
// hwSamples, then wraps: an idle partition keeps one sample.
type hwRing struct {
	topicID [16]byte
	s       []hwSample
	head, n int
	seen    uint64 // refresh generation of the last reading, for pruning
}

func newHWHistory() *hwHistory {
	return &hwHistory{parts: make(map[logparse.PartitionKey]*hwRing)}
}

// observe records the HW read at now. A new topic id, or an HW that went
// backwards, starts the history afresh: the old offsets mean nothing now.
func (h *hwHistory) observe(k logparse.PartitionKey, topicID [16]byte, hw int64, now time.Time, gen uint64) {
	if h == nil {
		return
	}
	r, ok := h.parts[k]
	if !ok || r.topicID != topicID {
		r = &hwRing{topicID: topicID}
		h.parts[k] = r
	}
	r.seen = gen
	t := now.UnixNano()
	if r.n > 0 {
		last := &r.s[(r.head+r.n-1)%len(r.s)]
		switch {
		case hw == last.offset:
			last.last = t
			return
		case hw < last.offset:
			r.head, r.n = 0, 0
		}
	}
	sample := hwSample{offset: hw, first: t, last: t}
	switch {
	case r.n < len(r.s):
		r.s[(r.head+r.n)%len(r.s)] = sample
		r.n++
	case len(r.s) < hwSamples:
		// Not full yet: head is 0 (a ring only wraps once full).
		r.s = append(r.s[:r.n], sample)
		r.n++
	default:
		r.s[r.head] = sample
		r.head = (r.head + 1) % hwSamples
	}
}

// touch keeps a partition whose HW this refresh did not read.
func (h *hwHistory) touch(k logparse.PartitionKey, gen uint64) {
	if h == nil {
		return
	}
	if r, ok := h.parts[k]; ok {
		r.seen = gen
	}
}

// forget drops partitions not read since generation keepFrom.
func (h *hwHistory) forget(keepFrom uint64) {
	if h == nil {
		return
	}
	for k, r := range h.parts {
		if r.seen < keepFrom {
			delete(h.parts, k)
		}
	}
}

// ring is the history of k; nil without any reading.
func (h *hwHistory) ring(k logparse.PartitionKey) *hwRing {
	if h == nil {
		return nil
	}
	return h.parts[k]
}

// lagSeconds is the history of k's lagSeconds.
func (h *hwHistory) lagSeconds(k logparse.PartitionKey, committed int64, now time.Time) (float64, bool) {
	return h.ring(k).lagSeconds(committed, now)
}

// lagSeconds is how long ago the HW passed offset committed, i.e. the age
// of the oldest record the group can read and has not: 0 when committed is
// at or past the last HW read; else interpolated linearly between the last
// reading at or below committed and the first above it; and, when committed
// is older than the whole history, the age of the oldest reading (a lower
// bound). ok is false without any reading.
func (r *hwRing) lagSeconds(committed int64, now time.Time) (float64, bool) {
	if r == nil || r.n == 0 {
		return 0, false
	}
	at := func(i int) *hwSample { return &r.s[(r.head+i)%len(r.s)] }
	if committed >= at(r.n-1).offset {
		return 0, true
	}
	t := now.UnixNano()
	if committed < at(0).offset {
		return seconds(t - at(0).first), true
	}
	// The first sample above committed; the one before is at or below it.
	i := 1
	for at(i).offset <= committed {
		i++
	}
	lo, hi := at(i-1), at(i)
	frac := float64(committed-lo.offset) / float64(hi.offset-lo.offset)
	when := float64(lo.last) + frac*float64(hi.first-lo.last)
	return max(float64(t)-when, 0) / 1e9, true
}

// behindLastAdvance is how long before the last HW was first read the HW
// passed offset committed, in seconds: how far a group that committed there
// was behind when the HW last advanced. ok is false without a reading.
func (r *hwRing) behindLastAdvance(committed int64) (float64, bool) {
	if r == nil || r.n == 0 {
		return 0, false
	}
	return r.lagSeconds(committed, time.Unix(0, r.s[(r.head+r.n-1)%len(r.s)].first))
}

// caughtUpWithinOrZero is caughtUpWithin, 0 without a history.
func (h *hwHistory) caughtUpWithinOrZero() time.Duration {
	if h == nil {
		return 0
	}
	return h.caughtUpWithin
}

// lastStep returns the HW read before the last one, the bottom of the HW's
// last advance; ok is false while the history holds a single HW.
func (r *hwRing) lastStep() (int64, bool) {
	if r == nil || r.n < 2 {
		return 0, false
	}
	return r.s[(r.head+r.n-2)%len(r.s)].offset, true
}

func seconds(ns int64) float64 { return max(float64(ns), 0) / 1e9 }

// newGroupHistory is the HW history when consumer groups are read, else nil.
func newGroupHistory(cfg *Config) *hwHistory {
	if !cfg.Groups.Enabled {
		return nil
	}
	h := newHWHistory()
	h.caughtUpWithin = cfg.RefreshInterval + caughtUpCommitGrace
	return h
}
