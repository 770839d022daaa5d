package tail

import (
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
)

// Why a follower cannot read its file, as Stats.Reason gives it; "" means
// it can.
const (
	ReasonNotFound         = "not_found"         // nothing at the path (and no file open)
	ReasonPermissionDenied = "permission_denied" // the file or a directory above it is not readable
	ReasonNotRegularFile   = "not_regular_file"  // a directory, named pipe, device or socket
	ReasonReadError        = "read_error"        // any other failure to stat, open or read
)

// Reasons lists every reason a follower can report, for exporting one
// series per reason.
var Reasons = [...]string{ReasonNotFound, ReasonPermissionDenied, ReasonNotRegularFile, ReasonReadError}

// reasonFor classifies what Poll returned.
func reasonFor(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, ErrClosed):
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return ReasonNotFound
	case errors.Is(err, fs.ErrPermission):
		return ReasonPermissionDenied
	case errors.Is(err, errNotRegular):
		return ReasonNotRegularFile
	}
	return ReasonReadError
}

// Stats is a snapshot of a Follower's counters, safe to take from another
// goroutine (the /metrics handler) while the follower runs.
type Stats struct {
	Lines       uint64 // lines delivered, cut ones included
	Bytes       uint64 // bytes read from files or the pipe
	Rotations   uint64 // rename+create (or delete+create) rotations followed
	Truncations uint64 // copytruncate (or truncation while down) detected: read again from the start
	// PartialTruncations counts a live file cut shorter but keeping its
	// beginning: reading went on at its new end, nothing read twice.
	PartialTruncations uint64
	CutLines           uint64    // lines longer than MaxLineBytes, delivered cut
	DroppedPartials    uint64    // partial lines lost because the file was truncated under them
	ResumeMisses       uint64    // a saved Position matched no file: started at the beginning of the live file
	Offset             int64     // read offset of the last delivered line's end in the current file
	Inode              uint64    // inode of the current file (0 when none is open)
	LastRead           time.Time // wall time the last line was delivered (zero before the first)
	Ready              bool      // a file (or the pipe) is open and Reason is ""
	// Reason is why the file cannot be read now, one of Reasons, or ""
	// while it can.
	Reason string
	// Errors counts, for every one of Reasons, how many times the file
	// became unreadable for that reason (changes of state, not polls).
	Errors map[string]uint64
}

// counters is the live form of Stats.
type counters struct {
	lines, bytes, rotations, truncations, cut, dropped, resumeMisses atomic.Uint64
	partialTruncations                                               atomic.Uint64
	offset                                                           atomic.Int64
	inode                                                            atomic.Uint64
	lastRead                                                         atomic.Int64 // unix nanoseconds
	ready                                                            atomic.Bool
	reason                                                           atomic.Pointer[string]
	errors                                                           [len(Reasons)]atomic.Uint64 // by index in Reasons
}

// setReason records the outcome of a poll, logging and counting only
// changes: a file that stays unreadable is one warning, not four a second.
func (c *counters) setReason(reason string, err error, log *slog.Logger) {
	was := ""
	if p := c.reason.Load(); p != nil {
		was = *p
	}
	if reason == was {
		return
	}
	c.reason.Store(&reason)
	if reason == "" {
		log.Info("log file readable again", "was", was)
		return
	}
	c.errors[slices.Index(Reasons[:], reason)].Add(1)
	log.Warn("cannot read the log file, retrying every poll", "reason", reason, "err", err)
}

func (c *counters) snapshot() Stats {
	s := Stats{
		Lines:              c.lines.Load(),
		Bytes:              c.bytes.Load(),
		Rotations:          c.rotations.Load(),
		Truncations:        c.truncations.Load(),
		PartialTruncations: c.partialTruncations.Load(),
		CutLines:           c.cut.Load(),
		DroppedPartials:    c.dropped.Load(),
		ResumeMisses:       c.resumeMisses.Load(),
		Offset:             c.offset.Load(),
		Inode:              c.inode.Load(),
		Errors:             make(map[string]uint64, len(Reasons)),
	}
	if p := c.reason.Load(); p != nil {
		s.Reason = *p
	}
	s.Ready = c.ready.Load() && s.Reason == ""
	for i, r := range Reasons {
		s.Errors[r] = c.errors[i].Load()
	}
	if ns := c.lastRead.Load(); ns != 0 {
		s.LastRead = time.Unix(0, ns)
	}
	return s
}
