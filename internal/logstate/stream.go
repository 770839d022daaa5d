package logstate

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Stream turns the followed files of one broker into one stream of events in
// log-time order and applies it to the Store, from one goroutine, the same way
// while catching up a backlog and while following live.
//
// The order is the one `verify` uses (logparse.MergeByTime): the event with
// the earliest time among the files' next events goes first, the file given
// first on equal times. A file's next event is only known once read, so each
// file is read a bounded slice at a time (memory does not grow with the
// backlog) and an event is applied only when no other file can still produce
// one that goes before it (see blocker). Live, that holds an event until the
// other files have been read to their end after it: about one poll interval.
type Stream struct {
	files []*LogFile
	store *Store
	poll  time.Duration
	batch storeBatch
	seq   uint64    // reads so far: the watermark's clock
	last  time.Time // log time of the last event applied in this step
	clear uint64    // a read whose events are all applied as they are queued (applyNow)

	caughtUp atomic.Bool  // every file's backlog found at start is applied
	lastTime atomic.Int64 // log time (unix ns) of the last event applied
	atEnd    atomic.Bool  // at the last step, every file had been read to its end
}

// NewStream merges files into store, reading them every poll interval when
// there is nothing left to read.
func NewStream(store *Store, files []*LogFile, poll time.Duration) *Stream {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	s := &Stream{files: files, store: store, poll: poll, batch: storeBatch{s: store}}
	for _, f := range files {
		f.stream = s
	}
	return s
}

// Run reads and applies until ctx is done. Every step is bounded (a budget
// of bytes per file, a bound on events applied), so cancellation is seen
// within one step even while catching up or under a flood.
func (s *Stream) Run(ctx context.Context) {
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	for ctx.Err() == nil {
		if s.Step() {
			continue
		}
		select {
		case <-ctx.Done():
		case <-ticker.C:
		}
	}
}

// maxApplyPerStep bounds the events one step applies, so that a step (and a
// scrape's wait for the store) stays short.
const maxApplyPerStep = 4096

// Step reads what each file without a waiting event has, then applies every
// event whose place in the order is settled. It reports whether it read or
// applied anything: false means the files are idle and the caller may wait.
func (s *Stream) Step() bool {
	now := time.Now()
	s.store.Tick(now)
	progress := false
	atEnd, caughtUp := true, true
	for _, f := range s.files {
		if f.next() == nil && s.read(f, now) {
			progress = true
		}
	}
	s.last = time.Time{}
	for applied := 0; applied < maxApplyPerStep; {
		i := s.first()
		if i < 0 {
			break
		}
		if j := s.blocker(i); j >= 0 {
			f := s.files[j]
			if !f.more && f.eofSeq > s.files[i].next().seq {
				break // its held record began too early: wait for its next line or its flush (quiet, or held a poll interval)
			}
			// It may hold what goes first: read it now, then choose again.
			if s.read(f, now) {
				progress = true
			}
			continue
		}
		f := s.files[i]
		s.apply(f)
		applied++
		progress = true
		if f.next() == nil && f.more {
			s.read(f, now)
		}
	}
	s.batch.release()
	if !s.last.IsZero() {
		s.lastTime.Store(s.last.UnixNano())
	}
	for _, f := range s.files {
		f.publish()
		if f.more || f.eofSeq == 0 && !f.ended {
			atEnd = false
		}
		caughtUp = caughtUp && f.caughtUp()
	}
	s.atEnd.Store(atEnd)
	if caughtUp {
		s.caughtUp.Store(true)
	}
	return progress
}

func (s *Stream) read(f *LogFile, now time.Time) bool {
	s.seq++
	return f.read(s.seq, now)
}

// apply applies f's next event.
func (s *Stream) apply(f *LogFile) {
	p := f.next()
	s.batch.apply(&p.ev)
	s.batch.record()
	s.last = p.ev.Time
	f.pop()
}

// applyNow applies f's next event, just read, if it goes first and no file
// can still produce one that goes before it: Step's rule, taken as the event
// is queued, so that while nothing waits the queue stays one entry long.
// The other files do not change during f's read: when none of them has an
// event waiting, the answer holds for the rest of the read.
func (s *Stream) applyNow(f *LogFile) bool {
	if f.seq != s.clear { // the read that queued the event
		i := s.first()
		if s.files[i] != f || s.blocker(i) >= 0 {
			return false
		}
		if s.waiting() == 1 {
			s.clear = f.seq
		}
	}
	s.apply(f)
	return true
}

// waiting is how many files have an event waiting.
func (s *Stream) waiting() int {
	n := 0
	for _, f := range s.files {
		if f.next() != nil {
			n++
		}
	}
	return n
}

// first is the file whose next event goes first by time (the lowest index on
// equal times, as MergeByTime), or -1 when no file has one waiting.
func (s *Stream) first() int {
	best := -1
	var bestEv *logparse.Event
	for i, f := range s.files {
		if p := f.next(); p != nil && (bestEv == nil || p.ev.Time.Before(bestEv.Time)) {
			best, bestEv = i, &p.ev
		}
	}
	return best
}

// blocker returns a file that may still produce an event that goes before
// file i's next one, or -1. A file with an event waiting does not (first chose
// i over it). A file without one may, unless it was read to its end by a read
// after i's event was read — its writer had written everything before that
// event by then — and the record it holds (if any), waiting for its
// continuation lines, began after such a read too.
func (s *Stream) blocker(i int) int {
	seq := s.files[i].next().seq
	for j, f := range s.files {
		if j == i || f.next() != nil || f.ended {
			continue
		}
		if f.more || f.eofSeq <= seq || (f.splitter.Pending() && f.heldAfter <= seq) {
			return j
		}
	}
	return -1
}

// Files are the stream's files, in the order given.
func (s *Stream) Files() []*LogFile { return s.files }

// CaughtUp reports whether the backlog found at start is applied: every file
// was read to its end, and every record it held then was applied.
func (s *Stream) CaughtUp() bool { return s.caughtUp.Load() }

// BehindSeconds is how far the applied log time is behind now while a file
// has more to read, 0 once every file was read to its end.
func (s *Stream) BehindSeconds(now time.Time) float64 {
	if s.atEnd.Load() {
		return 0
	}
	t := s.lastTime.Load()
	if t == 0 {
		return 0
	}
	return max(0, now.Sub(time.Unix(0, t)).Seconds())
}
