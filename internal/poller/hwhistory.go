package poller

import (
	"math"
	"slices"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// hwHistory keeps, per partition, up to hwSamples distinct high watermarks
// the poller read and when, so that a committed offset can be turned into a
// time: when the HW was there (lag in seconds, as kafka-lag-exporter does,
// but from the HW readings the poller takes anyway). Memory per partition is
// fixed; the readings thin out as they age (thin), so the history reaches
// back to its first reading however busy the partition. Kept only while
// consumer groups are read.
type hwHistory struct {
	parts map[logparse.PartitionKey]*hwReadings
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

// hwSamples bounds the history of one partition; thin keeps the newest
// hwRecent of them, every refresh's, whatever their age.
const (
	hwSamples = 24
	hwRecent  = 4
)

// hwSample is one distinct HW and the first and last refresh that read it:
// the HW reached offset after the previous sample's last reading and at or
// before first.
type hwSample struct {
	offset      int64
	first, last int64 // unix nanoseconds
}

// hwReadings is one partition's samples, oldest first: at most hwSamples,
// one for an idle partition.
type hwReadings struct {
	topicID [16]byte
	s       []hwSample
	seen    uint64 // refresh generation of the last reading, for pruning
}

func newHWHistory() *hwHistory {
	return &hwHistory{parts: make(map[logparse.PartitionKey]*hwReadings)}
}

// observe records the HW read at now. A new topic id, or an HW that went
// backwards, starts the history afresh: the old offsets mean nothing now.
func (h *hwHistory) observe(k logparse.PartitionKey, topicID [16]byte, hw int64, now time.Time, gen uint64) {
	if h == nil {
		return
	}
	r, ok := h.parts[k]
	if !ok || r.topicID != topicID {
		r = &hwReadings{topicID: topicID}
		h.parts[k] = r
	}
	r.seen = gen
	t := now.UnixNano()
	if n := len(r.s); n > 0 {
		switch last := &r.s[n-1]; {
		case hw == last.offset:
			last.last = t
			return
		case hw < last.offset:
			r.s = r.s[:0]
		}
	}
	switch {
	case len(r.s) == hwSamples:
		r.thin(t)
	case len(r.s) == cap(r.s): // double, up to hwSamples (append would pass it)
		grown := make([]hwSample, len(r.s), min(max(2*len(r.s), 1), hwSamples))
		r.s = grown[:copy(grown, r.s)]
	}
	r.s = append(r.s, hwSample{offset: hw, first: t, last: t})
}

// thin drops one reading to make room for another, neither the oldest (the
// history's reach) nor one of the hwRecent-1 newest (which with the one to
// come are the last refreshes, the HW's last advances that caughtUp reads):
// the one whose neighbors are closest together for their age.
// Dropping reading i leaves the span between its neighbors to
// interpolation, which can misdate a committed offset there by that span at
// most, and such an offset's lag is at least the newer neighbor's age; so
// the error relative to the lag stays smallest, and the older readings thin
// out as they age (the README states the bounds; TestHWHistoryThinsWithAge
// measures them).
func (r *hwReadings) thin(now int64) {
	drop, best := 1, math.Inf(1)
	for i := 1; i < len(r.s)-(hwRecent-1); i++ {
		span := float64(r.s[i+1].first - r.s[i-1].last)
		age := float64(max(now-r.s[i+1].first, 1))
		if span/age < best {
			drop, best = i, span/age
		}
	}
	r.s = slices.Delete(r.s, drop, drop+1)
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

// readings is the history of k; nil without any reading.
func (h *hwHistory) readings(k logparse.PartitionKey) *hwReadings {
	if h == nil {
		return nil
	}
	return h.parts[k]
}

// lagSeconds is the history of k's lagSeconds.
func (h *hwHistory) lagSeconds(k logparse.PartitionKey, committed int64, now time.Time) (float64, bool) {
	return h.readings(k).lagSeconds(committed, now)
}

// lagSeconds is how long ago the HW passed offset committed, i.e. the age
// of the oldest record the group can read and has not: 0 when committed is
// at or past the last HW read; else interpolated linearly between the last
// reading at or below committed and the first above it; and, when committed
// is older than the whole history, the age of the oldest reading (a lower
// bound). ok is false without any reading.
func (r *hwReadings) lagSeconds(committed int64, now time.Time) (float64, bool) {
	if r == nil || len(r.s) == 0 {
		return 0, false
	}
	if committed >= r.s[len(r.s)-1].offset {
		return 0, true
	}
	t := now.UnixNano()
	if committed < r.s[0].offset {
		return seconds(t - r.s[0].first), true
	}
	// The first sample above committed; the one before is at or below it.
	i := 1
	for r.s[i].offset <= committed {
		i++
	}
	lo, hi := r.s[i-1], r.s[i]
	frac := float64(committed-lo.offset) / float64(hi.offset-lo.offset)
	when := float64(lo.last) + frac*float64(hi.first-lo.last)
	return max(float64(t)-when, 0) / 1e9, true
}

// behindLastAdvance is how long before the last HW was first read the HW
// passed offset committed, in seconds: how far a group that committed there
// was behind when the HW last advanced. ok is false without a reading, and
// for an offset older than every reading: lagSeconds's lower bound there
// would call a group that was behind before the history began caught up.
func (r *hwReadings) behindLastAdvance(committed int64) (float64, bool) {
	if r == nil || len(r.s) == 0 || committed < r.s[0].offset {
		return 0, false
	}
	return r.lagSeconds(committed, time.Unix(0, r.s[len(r.s)-1].first))
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
func (r *hwReadings) lastStep() (int64, bool) {
	if r == nil || len(r.s) < 2 {
		return 0, false
	}
	return r.s[len(r.s)-2].offset, true
}

func seconds(ns int64) float64 { return max(float64(ns), 0) / 1e9 }

// newGroupHistory is the HW history when consumer or share groups are read,
// else nil.
func newGroupHistory(cfg *Config) *hwHistory {
	if !cfg.Groups.Enabled && !cfg.Groups.Share {
		return nil
	}
	h := newHWHistory()
	h.caughtUpWithin = cfg.RefreshInterval + caughtUpCommitGrace
	return h
}
