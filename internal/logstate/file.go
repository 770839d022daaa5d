package logstate

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// LogFile is one followed broker log file as a source of the Stream: it reads
// a bounded slice of the file at a time and holds the events read but not
// yet applied, in file order, each with the point in the file just after it.
// Everything but Stats and Path belongs to the Stream's goroutine.
type LogFile struct {
	Path     string
	name     string // what events name as their file: Path, or the file a ToEnd read is in
	follower *tail.Follower
	splitter *logparse.Splitter
	parser   *logparse.Parser
	clock    logparse.FileClock
	quiet    time.Duration // how long a file must be idle, or a record held, before the held record is flushed
	stream   *Stream       // the stream it feeds (set by NewStream)
	log      *slog.Logger

	queue []pending // read, not applied yet; queue[head:] are live
	head  int

	seq       uint64    // the read being delivered (see Stream)
	now       time.Time // the wall clock at that read
	lastLine  time.Time // wall time a line was last delivered
	behindAt  time.Time // wall time behind was last measured
	prevEnd   tail.Mark // end of the line before the one being pushed
	linesRead int       // lines delivered by the current read
	emitted   uint64    // records completed so far

	// The watermark (see Stream.blocker): eofSeq is the last read that
	// found nothing more to read now, more that the last read stopped at its
	// budget, ended that a pipe ended; heldAfter is the eofSeq in force when
	// the record the splitter holds began.
	eofSeq, heldAfter uint64
	more, ended       bool
	heldSince         time.Time // wall time of the read in which the held record began

	// afterFlush is set when a record was flushed while its file may still
	// grow (quiet, or held for a poll interval) and at a resume inside a
	// file: continuation lines that follow belong to that record, not to
	// nothing, and are counted as its lines (absorbed), not as malformed.
	afterFlush bool
	absorbed   uint64

	// skipUpTo is, after a restart that could not resume at its saved
	// position, the log time (Unix ns) of the last event applied before the
	// stop: records up to the first event stamped after it were applied
	// already and are skipped (0: nothing to skip, or done skipping).
	skipUpTo  int64
	nSkipped  uint64    // records skipped so
	lastEvent time.Time // log time of the last event applied
	savedLast int64     // the saved position's LastEvent, until an event is applied

	// reachedEnd is set at the first read to the end of the file; backlog
	// is how many records it had read (or held) by then.
	reachedEnd bool
	backlog    uint64

	// Records recognized as Kafka's (logparse.Record.Recognized), and the
	// lines read since the last one: a file that reads lines but never
	// such a record is in a layout the parser does not know.
	nRecognized     uint64
	sinceRecognized int
	layoutUnknown   bool // warned, not recognized since

	applied    tail.Mark // end of the last record whose effects are applied
	appliedSet bool
	nRecords   uint64 // records applied (events and the records between them)
	nLines     uint64 // their physical lines

	// A ToEnd read splits each file on its own (a record does not run
	// from one file into the next, and its line numbers are the file's):
	// splitMalformed is what the splitters of the files before counted; err
	// the error that ended the read.
	toEnd          bool
	splitMalformed int64
	err            error

	records, lines, malformed, future, recognized atomic.Uint64
	skipped                                       atomic.Uint64 // events skipped as applied before a restart
	behind                                        atomic.Int64  // bytes left to read at the last read
	posMu                                         sync.Mutex
	pos                                           tail.Position // published Position of applied, for the position file
	hasPos                                        bool
}

// pending is one event read but not applied, with the records after it that
// are not events: applying it accounts for all of them.
type pending struct {
	ev      logparse.Event
	seq     uint64    // the read it was emitted by
	end     tail.Mark // end of the last record it accounts for
	records uint64
	lines   uint64 // the physical lines of those records

	// first is the record's first line, kept for a Stream that reports
	// events with their text (ReadToEnd).
	first []byte

	// The memory of ev's lists and first, kept when the entry is reused.
	isr, fromISR, toISR  []int32
	oos, acked, awaiting []logparse.ReplicaOffset
	firstBuf             []byte
}

// LogFileOptions configure how a file is followed.
type LogFileOptions struct {
	FromBeginning bool
	Start         *tail.Position // resume point from the position file, if any
	PollInterval  time.Duration
	Location      *time.Location // how zone-less broker timestamps are read
	Logger        *slog.Logger
	// ToEnd reads Before, then the file, once from the beginning to the
	// end, as the offline commands do (tail.Options.ToEnd).
	ToEnd  bool
	Before []string
	// Stdin is what "-" reads; nil means os.Stdin.
	Stdin io.Reader
	// AllFields reads every field of every line, as `events` prints them;
	// serve and verify read the lines they count by type only to their type
	// (logparse.Parser.TypeOnly).
	AllFields bool
}

// NewLogFile prepares a follower for path ("-" = stdin). Nothing is opened
// before the Stream's first read.
func NewLogFile(path string, opts LogFileOptions) *LogFile {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	parser := logparse.NewParser(opts.Location)
	parser.TypeOnly = !opts.AllFields
	f := &LogFile{
		Path:     path,
		name:     path,
		splitter: logparse.NewSplitter(),
		parser:   parser,
		quiet:    opts.PollInterval,
		log:      opts.Logger.With("file", path),
		toEnd:    opts.ToEnd,
	}
	topts := tail.Options{
		FromBeginning: opts.FromBeginning,
		Start:         opts.Start,
		Logger:        opts.Logger, // the follower adds file=path
		ToEnd:         opts.ToEnd,
		Before:        opts.Before,
		LineTime:      LineTime,
	}
	if opts.ToEnd {
		topts.OnFile = f.fileOpened
	}
	if path == "-" && opts.Stdin != nil {
		f.follower = tail.NewPipe(path, opts.Stdin, topts)
	} else {
		f.follower = tail.New(path, topts)
	}
	if p := opts.Start; p != nil {
		f.pos, f.hasPos = *p, true
		f.skipUpTo, f.savedLast = p.LastEvent, p.LastEvent
		f.afterFlush = p.Offset > 0
	}
	return f
}

// readBudget bounds one read of a file: the events of at most this many bytes
// wait in memory to be merged, whatever the backlog.
const readBudget = 128 << 10

// read reads the next slice of the file as read number seq and queues its
// events. It reports whether any line was read or record completed.
func (f *LogFile) read(seq uint64, now time.Time) bool {
	if f.ended {
		return false
	}
	f.seq, f.now, f.linesRead = seq, now, 0
	records, wasHeld := f.emitted, f.splitter.Pending()
	more, err := f.follower.Read(f.line, readBudget)
	if f.splitter.Pending() && (f.emitted > records || !wasHeld) {
		// The record held began in this read: remember how much of the file
		// had been read to its end before it (the watermark's held record
		// rule). Only a new record ends one, so this needs no look per line.
		f.heldAfter, f.heldSince = f.eofSeq, now
	}
	f.more = more
	if !more {
		f.eofSeq = seq
		if !f.reachedEnd {
			// The backlog: the records read so far and the one held.
			f.reachedEnd, f.backlog = true, f.emitted
			if f.splitter.Pending() {
				f.backlog++
			}
		}
	}
	if errors.Is(err, io.EOF) { // a pipe or a ToEnd read ended: nothing can complete a held record
		f.ended = true
		f.flush()
	} else if err != nil && f.toEnd {
		f.err, f.ended = err, true
	}
	if f.linesRead > 0 {
		f.lastLine = now
	}
	if !more && f.splitter.Pending() && (now.Sub(f.quietSince()) >= f.quiet || now.Sub(f.heldSince) >= f.quiet) {
		// Quiet for a poll interval: the held record's continuation lines
		// are not coming. Or held for one while they keep coming: it must
		// not hold back the other files' events for as long as it grows.
		f.flush()
		f.afterFlush = true
	}
	if !more {
		f.behind.Store(0)
	} else if now.Sub(f.behindAt) >= f.quiet {
		// A stat per file: once a poll interval is enough for a gauge.
		f.behind.Store(f.follower.Behind())
		f.behindAt = now
	}
	f.malformed.Store(uint64(f.splitMalformed+f.splitter.Malformed()+f.parser.Malformed()) - f.absorbed)
	f.recognized.Store(f.nRecognized)
	return f.linesRead > 0 || f.emitted > records
}

// quietSince is when the file was last known to grow: the last read that
// delivered a line, or its last write when that was earlier, less a second
// for filesystems that keep whole seconds. A backlog written long ago is
// quiet when first read to its end: its last record's continuation lines
// would have been written by then, and catching up need not wait a poll
// interval for them.
func (f *LogFile) quietSince() time.Time {
	if w := f.follower.LastWrite(); !w.IsZero() && w.Add(time.Second).Before(f.lastLine) {
		return w.Add(time.Second)
	}
	return f.lastLine
}

// unknownLayoutLines is how many lines in a row without a record recognized
// as Kafka's make the file's layout unknown, for the WARN: a quiet broker's
// few lines are nearly all Kafka's, and a GC log or a wrong file is not
// declared after one line.
const unknownLayoutLines = 200

func (f *LogFile) line(b []byte) {
	f.linesRead++
	if f.sinceRecognized++; f.sinceRecognized == unknownLayoutLines && !f.layoutUnknown {
		f.layoutUnknown = true
		f.log.Warn("no line read is a Kafka log record in a layout the exporter knows: its events are not counted (see the README's supported layouts)",
			"lines", unknownLayoutLines)
	}
	if f.afterFlush {
		f.lineAfterFlush(b)
	} else if rec := f.splitter.Push(b); rec != nil {
		f.record(rec, f.prevEnd)
	}
	f.prevEnd = f.follower.Mark()
}

// lineAfterFlush pushes a line that follows a flushed record: a header starts
// records as usual, a continuation line (an orphan to the splitter, which
// holds nothing) is the flushed record's, its line and its end.
func (f *LogFile) lineAfterFlush(b []byte) {
	m := f.splitter.Malformed()
	if rec := f.splitter.Push(b); rec != nil {
		f.record(rec, f.prevEnd)
	}
	switch {
	case f.splitter.Pending():
		f.afterFlush = false
	case f.splitter.Malformed() == m+1 && bytes.IndexByte(b, 0) < 0:
		f.absorbed++
		end := f.follower.Mark()
		if f.head < len(f.queue) {
			last := &f.queue[len(f.queue)-1]
			last.lines++
			last.end = end
			return
		}
		f.nLines++
		f.applied, f.appliedSet = end, true
	}
}

// fileOpened starts the next file of a ToEnd read: the records of the one
// before end with it, and the new file's lines are numbered from 1.
func (f *LogFile) fileOpened(name string) {
	f.flush()
	f.splitMalformed += f.splitter.Malformed()
	f.splitter = logparse.NewSplitter()
	f.name = name
}

func (f *LogFile) flush() {
	for rec := f.splitter.Flush(); rec != nil; rec = f.splitter.Flush() {
		f.record(rec, f.prevEnd)
	}
}

// record queues rec's event, or accounts a record that is no event to the
// last queued event (or as applied when none waits). end is where rec ends.
func (f *LogFile) record(rec *logparse.Record, end tail.Mark) {
	f.emitted++
	// Parsed straight into the queue's next slot: most records of a busy log
	// are events, and an event is a few hundred bytes to copy.
	p := f.slot()
	isEvent := f.parser.ParseInto(rec, &p.ev)
	if isEvent || rec.Recognized() {
		f.recognize()
	}
	if f.skipUpTo != 0 && f.appliedBefore(isEvent, &p.ev, end) {
		return
	}
	if !isEvent {
		if f.head < len(f.queue) {
			last := &f.queue[len(f.queue)-1]
			last.records++
			last.lines += uint64(rec.Lines)
			last.end = end
			return
		}
		f.nRecords++
		f.nLines += uint64(rec.Lines)
		f.applied, f.appliedSet = end, true
		return
	}
	f.queue = f.queue[:len(f.queue)+1]
	p.ev.File = f.name
	if f.clock.Order(&p.ev, f.now) {
		f.future.Add(1)
	}
	p.seq, p.end, p.records, p.lines = f.seq, end, 1, uint64(rec.Lines)
	text := f.stream.observe != nil
	if text {
		p.first = rec.First
	}
	if f.head == len(f.queue)-1 && f.stream.applyNow(f) {
		return
	}
	p.own(text) // it waits: its lists must outlive the parser's next parse
}

// appliedBefore reports whether a record read after a restart that started
// over (tail.Follower.StartedOver) was applied before the stop, and skips it:
// every record up to the first event stamped after the last event applied
// then (or equal: the same millisecond may hold the event applied last).
// A resume at the saved position reads nothing again: there, and at the
// first event stamped later, skipping ends for good.
func (f *LogFile) appliedBefore(isEvent bool, ev *logparse.Event, end tail.Mark) bool {
	if !f.follower.StartedOver() || isEvent && (ev.Time.IsZero() || ev.Time.UnixNano() > f.skipUpTo) {
		if n := f.skipped.Load(); n > 0 {
			f.log.Warn("skipped the events read again after a restart that could not resume at its saved position: they were applied before it",
				"events", n, "records", f.nSkipped, "up_to", time.Unix(0, f.skipUpTo).UTC())
		}
		f.skipUpTo = 0
		return false
	}
	f.nSkipped++
	if isEvent {
		f.skipped.Add(1)
	}
	f.applied, f.appliedSet = end, true
	return true
}

// recognize counts a record recognized as Kafka's, and logs a file whose
// layout was unknown recognized again.
func (f *LogFile) recognize() {
	f.nRecognized++
	f.sinceRecognized = 0
	if f.layoutUnknown {
		f.layoutUnknown = false
		f.log.Info("Kafka log records recognized again")
	}
}

// slot returns the entry just past the queue, reusing the queue's memory.
func (f *LogFile) slot() *pending {
	if f.head == len(f.queue) {
		f.queue, f.head = f.queue[:0], 0
	}
	if len(f.queue) == cap(f.queue) {
		f.queue = append(f.queue, pending{})[:len(f.queue)]
	}
	return &f.queue[:len(f.queue)+1][len(f.queue)]
}

// caughtUp reports whether the records found before the file was first read
// to its end are all applied.
func (f *LogFile) caughtUp() bool {
	return f.ended || f.reachedEnd && f.nRecords+f.nSkipped >= f.backlog
}

// next is the oldest event read and not applied, or nil.
func (f *LogFile) next() *pending {
	if f.head < len(f.queue) {
		return &f.queue[f.head]
	}
	return nil
}

// pop marks next applied.
func (f *LogFile) pop() {
	p := &f.queue[f.head]
	f.head++
	f.nRecords += p.records
	f.nLines += p.lines
	f.applied, f.appliedSet = p.end, true
	f.lastEvent = p.ev.Time
}

// publish makes the counts and the applied position visible to scrapes and
// to the position file.
func (f *LogFile) publish() {
	f.records.Store(f.nRecords)
	f.lines.Store(f.nLines + uint64(f.splitMalformed+f.splitter.Malformed()) - f.absorbed)
	if !f.appliedSet || f.Path == "-" {
		return
	}
	if p, ok := f.follower.PositionOf(f.applied); ok {
		p.LastEvent = f.savedLast
		if !f.lastEvent.IsZero() {
			p.LastEvent = f.lastEvent.UnixNano()
		}
		f.posMu.Lock()
		f.pos, f.hasPos = p, true
		f.posMu.Unlock()
	}
}

// own copies the event's lists out of the parser's buffers (valid only until
// its next parse) into the entry's own, reused from entry to entry, and the
// record's first line (the splitter's until its next line) when text is set.
// Nil stays nil: the checker tells an ISR printed empty from none printed.
func (p *pending) own(text bool) {
	if text {
		p.firstBuf = append(p.firstBuf[:0], p.first...)
		p.first = p.firstBuf
	}
	ev := &p.ev
	ev.ISR, p.isr = ownInts(p.isr, ev.ISR)
	ev.FromISR, p.fromISR = ownInts(p.fromISR, ev.FromISR)
	ev.ToISR, p.toISR = ownInts(p.toISR, ev.ToISR)
	ev.OutOfSync, p.oos = ownOffsets(p.oos, ev.OutOfSync)
	ev.Acked, p.acked = ownOffsets(p.acked, ev.Acked)
	ev.Awaiting, p.awaiting = ownOffsets(p.awaiting, ev.Awaiting)
}

func ownInts(buf, src []int32) (owned, kept []int32) {
	if src == nil {
		return nil, buf
	}
	buf = append(buf[:0], src...)
	return buf, buf
}

func ownOffsets(buf, src []logparse.ReplicaOffset) (owned, kept []logparse.ReplicaOffset) {
	if src == nil {
		return nil, buf
	}
	buf = append(buf[:0], src...)
	return buf, buf
}

// Position is where a restart resumes this file: just after the last record
// whose effects were applied. false: nothing read yet and no saved position.
func (f *LogFile) Position() (tail.Position, bool) {
	f.posMu.Lock()
	defer f.posMu.Unlock()
	return f.pos, f.hasPos
}

// ReadCounts are what a ToEnd read found in a file, for verify's report.
type ReadCounts struct {
	Lines     uint64 // physical lines
	Records   uint64 // records (a header and its continuation lines)
	Malformed uint64 // lines dropped as junk, and records naming an impossible topic
	// FutureTimestamps counts events stamped far in the future
	// (logparse.FileClock).
	FutureTimestamps uint64
}

// ReadCounts returns the file's counts; call it from the Stream's goroutine.
func (f *LogFile) ReadCounts() ReadCounts {
	return ReadCounts{
		Lines:            f.follower.Stats().Lines,
		Records:          f.emitted,
		Malformed:        uint64(f.splitMalformed+f.splitter.Malformed()+f.parser.Malformed()) - f.absorbed,
		FutureTimestamps: f.future.Load(),
	}
}

// Ready reports whether the file (or pipe) is open.
func (f *LogFile) Ready() bool { return f.follower.Stats().Ready }

// FileStats is what a scrape shows of one followed file.
type FileStats struct {
	Path      string
	Records   uint64 // records applied (a header line plus its continuation lines)
	Malformed uint64 // dropped: junk lines, orphan continuations, over-long lines, replication lines naming an impossible topic
	// Recognized counts the records read that are Kafka's in a layout the
	// parser knows (logparse.Record.Recognized): 0 while lines are read
	// means an unknown layout.
	Recognized uint64
	// FutureTimestamps counts events stamped far in the future, ordered as
	// the file's previous event (logparse.FileClock).
	FutureTimestamps uint64
	// BehindBytes is what was left to read, measured at most once a poll
	// interval while there is more (0 once the end was reached).
	BehindBytes int64
	// SkippedEvents counts the events read again after a restart that could
	// not resume at its saved position, not applied again: they were before it.
	SkippedEvents uint64
	tail.Stats
}

// Stats returns the file's counters; safe while the Stream runs.
func (f *LogFile) Stats() FileStats {
	st := FileStats{
		Path:             f.Path,
		Records:          f.records.Load(),
		Malformed:        f.malformed.Load(),
		Recognized:       f.recognized.Load(),
		FutureTimestamps: f.future.Load(),
		BehindBytes:      f.behind.Load(),
		SkippedEvents:    f.skipped.Load(),
		Stats:            f.follower.Stats(),
	}
	// Lines as applied, like Records: a line read but not applied yet (the
	// record held for its continuation lines) is read again after a restart,
	// and must not be counted twice.
	st.Lines = f.lines.Load()
	return st
}

// LineTime is the time a log line starts with, in any layout the parser
// knows: the follower orders rolled copies by their first line's.
func LineTime(line []byte) (time.Time, bool) { return logparse.LineTime(line, time.UTC) }
