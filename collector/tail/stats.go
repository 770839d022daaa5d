package tail

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Follower's counters, safe to take from another
// goroutine (the /metrics handler) while the follower runs.
type Stats struct {
	Lines           uint64    // lines delivered, cut ones included
	Bytes           uint64    // bytes read from files or the pipe
	Rotations       uint64    // rename+create (or delete+create) rotations followed
	Truncations     uint64    // copytruncate (or truncation while down) detected
	CutLines        uint64    // lines longer than MaxLineBytes, delivered cut
	DroppedPartials uint64    // partial lines lost because the file was truncated under them
	ResumeMisses    uint64    // a saved Position matched no file: started at the beginning of the live file
	Offset          int64     // read offset of the last delivered line's end in the current file
	Inode           uint64    // inode of the current file (0 when none is open)
	LastRead        time.Time // wall time the last line was delivered (zero before the first)
	Ready           bool      // a file (or the pipe) is open
}

// counters is the live form of Stats.
type counters struct {
	lines, bytes, rotations, truncations, cut, dropped, resumeMisses atomic.Uint64
	offset                                                           atomic.Int64
	inode                                                            atomic.Uint64
	lastRead                                                         atomic.Int64 // unix nanoseconds
	ready                                                            atomic.Bool
}

func (c *counters) snapshot() Stats {
	s := Stats{
		Lines:           c.lines.Load(),
		Bytes:           c.bytes.Load(),
		Rotations:       c.rotations.Load(),
		Truncations:     c.truncations.Load(),
		CutLines:        c.cut.Load(),
		DroppedPartials: c.dropped.Load(),
		ResumeMisses:    c.resumeMisses.Load(),
		Offset:          c.offset.Load(),
		Inode:           c.inode.Load(),
		Ready:           c.ready.Load(),
	}
	if ns := c.lastRead.Load(); ns != 0 {
		s.LastRead = time.Unix(0, ns)
	}
	return s
}
