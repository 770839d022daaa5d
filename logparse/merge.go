package logparse

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
