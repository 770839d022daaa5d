package logparse

import "time"

// MergeByTime consumes n event sources in log-time order: head(i) is source
// i's next event (nil once it is exhausted) and pop(i) consumes it. On equal
// times the lower-numbered source goes first. It stops at pop's first error.
//
// Several logs of one broker are merged so that the checker sees a leader
// change in state-change.log before the server.log lines that follow it.
// There are few sources (one per log file), so a linear scan beats a heap.
func MergeByTime(n int, head func(i int) *Event, pop func(i int) error) error {
	for {
		best, bestEv := -1, (*Event)(nil)
		for i := range n {
			if ev := head(i); ev != nil && (bestEv == nil || ev.Time.Before(bestEv.Time)) {
				best, bestEv = i, ev
			}
		}
		if best < 0 {
			return nil
		}
		if err := pop(best); err != nil {
			return err
		}
	}
}

// FutureJump is how far a record's timestamp must lie beyond both its file's
// previous record and the wall clock to be taken as wrong: a broker writes
// its lines as they happen, so no real line is stamped an hour from now.
const FutureJump = time.Hour

// FileClock keeps one file's event times fit to merge. A timestamp that jumps
// more than FutureJump past both the file's previous event and the wall clock
// is replaced by the previous event's time (the wall clock's for a file's first
// event): within one file, file order is the truth, and a single bad stamp
// must not hold back every later line of its file, nor stand as the newest
// line for ever.
type FileClock struct {
	last time.Time
}

// futureJumpSeconds is FutureJump in the whole seconds Order compares: a
// comparison of time.Time values per event is a visible share of following a
// busy log.
const futureJumpSeconds = int64(FutureJump / time.Second)

// Order fixes ev.Time as described, reporting whether it was a future jump.
func (c *FileClock) Order(ev *Event, now time.Time) bool {
	t := ev.Time
	if t.IsZero() {
		return false
	}
	if t.Unix() > now.Unix()+futureJumpSeconds && (c.last.IsZero() || t.Sub(c.last) > FutureJump) {
		if c.last.IsZero() {
			c.last = now
		}
		ev.Time = c.last
		return true
	}
	c.last = t
	return false
}
