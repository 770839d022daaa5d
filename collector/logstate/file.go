package logstate

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/tail"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// LogFile follows one broker log file and feeds its records into the Store.
// Each LogFile has its own goroutine, splitter and parser; the Store is shared
// (server.log and state-change.log speak about the same partitions).
type LogFile struct {
	Path     string
	follower *tail.Follower
	splitter *logparse.Splitter
	parser   *logparse.Parser
	store    *Store
	logger   *slog.Logger
	poll     time.Duration

	records   atomic.Uint64
	malformed atomic.Uint64
	// Counted per line without atomics, published once per poll.
	nRecords uint64
	batch    storeBatch

	queue *[]logparse.Event // set while catching up: events are queued, not applied
	ev    logparse.Event    // reused for every record, so that a record allocates nothing
}

// LogFileOptions configure how a file is followed.
type LogFileOptions struct {
	FromBeginning bool
	Start         *tail.Position // resume point from the position file, if any
	PollInterval  time.Duration
	Location      *time.Location // how zone-less broker timestamps are read
	Logger        *slog.Logger
}

// NewLogFile prepares a follower for path ("-" = stdin). Nothing is opened
// before Run.
func NewLogFile(path string, store *Store, opts LogFileOptions) *LogFile {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The store counts ack lines by type only: their replica lists are not read.
	parser := logparse.NewParser(opts.Location)
	parser.ShallowAcks = true
	return &LogFile{
		Path: path,
		follower: tail.New(path, tail.Options{
			FromBeginning: opts.FromBeginning,
			Start:         opts.Start,
			Logger:        opts.Logger,
		}),
		splitter: logparse.NewSplitter(),
		parser:   parser,
		store:    store,
		batch:    storeBatch{s: store},
		logger:   opts.Logger,
		poll:     opts.PollInterval,
	}
}

// Run follows the file until ctx is done. A record is held by the splitter
// until the next record starts (its continuation lines may follow); when the
// file has been quiet for a whole poll interval the held record is flushed, so a
// lone last line is seen within two intervals.
func (f *LogFile) Run(ctx context.Context) {
	ticker := time.NewTicker(f.poll)
	defer ticker.Stop()
	for {
		before := f.follower.Stats().Lines
		f.store.Tick(time.Now())
		if err := f.follower.Poll(f.line); err != nil {
			f.logger.Debug("follow", "file", f.Path, "err", err)
		}
		if f.follower.Stats().Lines == before {
			f.flush()
		}
		f.publish()
		select {
		case <-ctx.Done():
			f.follower.Poll(f.line)
			f.flush()
			f.publish()
			return
		case <-ticker.C:
		}
	}
}

func (f *LogFile) line(b []byte) {
	if rec := f.splitter.Push(b); rec != nil {
		f.record(rec)
	}
}

func (f *LogFile) flush() {
	for rec := f.splitter.Flush(); rec != nil; rec = f.splitter.Flush() {
		f.record(rec)
	}
}

// publish releases the store and makes this poll's counts visible to
// scrapes: once per poll, not per line.
func (f *LogFile) publish() {
	f.batch.release()
	f.records.Store(f.nRecords)
	f.malformed.Store(uint64(f.splitter.Malformed() + f.parser.Malformed()))
}

func (f *LogFile) record(rec *logparse.Record) {
	f.nRecords++
	f.batch.record()
	ev := &f.ev
	if !f.parser.ParseInto(rec, ev) {
		return
	}
	ev.File = f.Path
	if f.queue != nil && len(*f.queue) < catchUpQueueCap {
		*f.queue = append(*f.queue, ev.Clone())
		return
	}
	f.batch.apply(ev)
}

// Position is where the follower stands, for the position file.
func (f *LogFile) Position() tail.Position { return f.follower.Position() }

// Ready reports whether the file (or pipe) is open.
func (f *LogFile) Ready() bool { return f.follower.Stats().Ready }

// Records returns how many records have been read.
func (f *LogFile) Records() uint64 { return f.records.Load() }

// FileStats is what a scrape shows of one followed file.
type FileStats struct {
	Path      string
	Records   uint64 // records read (a header line plus its continuation lines)
	Malformed uint64 // dropped: junk lines, orphan continuations, over-long lines, replication lines naming an impossible topic
	tail.Stats
}

// Stats returns the file's counters; safe while Run runs.
func (f *LogFile) Stats() FileStats {
	st := f.follower.Stats()
	return FileStats{
		Path:      f.Path,
		Records:   f.records.Load(),
		Malformed: f.malformed.Load(),
		Stats:     st,
	}
}

// catchUpQueueCap bounds the events held per file while catching up; past it,
// events are applied as read (in file order, not merged by time).
const catchUpQueueCap = 200_000

// CatchUp reads what the files already hold (a restart with a saved position,
// or --log.from-beginning) before they are followed live, and applies the
// events of all files merged by log time. Followed in separate goroutines, a
// leader change in state-change.log could otherwise be applied after the
// server.log lines that came later, and ISR shrinks and expands would be
// counted against the wrong ISR. Live, lines arrive within a poll interval of
// each other and the Store keeps each gauge's newest line anyway. Pipes (stdin)
// are not caught up: reading them blocks.
func CatchUp(files []*LogFile) {
	queues := make([][]logparse.Event, len(files))
	for i, f := range files {
		if f.Path == "-" {
			continue
		}
		f.queue = &queues[i]
		f.store.Tick(time.Now())
		f.follower.Poll(f.line)
		f.flush()
		f.publish()
		f.queue = nil
	}
	heads := make([]int, len(files))
	logparse.MergeByTime(len(files),
		func(i int) *logparse.Event {
			if heads[i] < len(queues[i]) {
				return &queues[i][heads[i]]
			}
			return nil
		},
		func(i int) error {
			files[i].store.Apply(&queues[i][heads[i]])
			heads[i]++
			return nil
		})
}
