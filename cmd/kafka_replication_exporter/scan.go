package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// scanStats counts what the offline commands read.
type scanStats struct {
	Lines     int64 // physical lines
	Records   int64 // records (a header plus its continuation lines)
	Parsed    int64 // records that were a replication event
	Malformed int64 // lines dropped as junk (orphans, binary, cut parts)
	CutLines  int64 // lines over maxLineBytes
	// FutureTimestamps counts events stamped far in the future, ordered
	// as their file's previous event (logparse.FileClock).
	FutureTimestamps int64
	EventCount       [256]int64
}

// scanFunc receives every record of every file, parsed or not. ev is nil when
// the record is not a replication event. rec and ev are only valid during the call.
type scanFunc func(file string, rec *logparse.Record, ev *logparse.Event)

// scanFiles reads the files and feeds each record through the parser.
//
// Several logs of one broker (server.log, state-change.log, controller.log) and
// of several brokers are merged by event time, so the checker sees a leader
// change in state-change.log before the HW lines that follow it in server.log;
// rotated files of one log are read in sequence. Records that are not events
// need no ordering and are passed on as they are read.
func scanFiles(paths []string, loc *time.Location, stdin io.Reader, fn scanFunc) (st *scanStats, err error) {
	st = &scanStats{}
	if err := checkInputs(paths); err != nil {
		return st, err
	}
	var streams []*stream
	var reading *stream // the stream being advanced, for the fault message
	// Files are memory-mapped: one truncated while it is read faults on
	// access instead of returning EOF. That fault becomes this error.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		name := "a log file"
		if reading != nil {
			reading.close()
			name = reading.name
		}
		closeAll(streams)
		err = fmt.Errorf("%s shrank while it was read (truncated by copytruncate?); verify a copy of it: %v", name, r)
	}()
	for _, g := range groupInputs(paths) {
		s := &stream{files: g, stdin: stdin, st: st, fn: fn, parser: logparse.NewParser(loc)}
		reading = s
		if err := s.advance(); err != nil {
			s.close()
			closeAll(streams)
			return st, err
		}
		if !s.done {
			streams = append(streams, s)
		}
	}
	defer closeAll(streams)
	err = logparse.MergeByTime(len(streams),
		func(i int) *logparse.Event {
			if streams[i].done {
				return nil
			}
			return &streams[i].ev
		},
		func(i int) error {
			s := streams[i]
			fn(s.name, s.rec, &s.ev)
			reading = s
			if err := s.advance(); err != nil {
				return err
			}
			if s.done {
				s.close()
			}
			return nil
		})
	return st, err
}

func closeAll(streams []*stream) {
	for _, s := range streams {
		s.close()
	}
}

// stream reads one log (its rotated files in order) and stops at each event.
type stream struct {
	files  []string
	idx    int
	stdin  io.Reader
	st     *scanStats
	fn     scanFunc
	parser *logparse.Parser

	name string
	rc   io.Closer // the open file (lr reads it, or its mapping)
	lr   *lineReader
	sp   *logparse.Splitter
	eof  bool // current file fully read and flushed

	rec   *logparse.Record // the pending event's record (the Splitter's)
	ev    logparse.Event   // the pending event
	clock logparse.FileClock
	done  bool
}

// advance reads until the next event (left in s.rec/s.ev) or the end of the last file.
func (s *stream) advance() error {
	for {
		if s.rc == nil {
			if s.idx == len(s.files) {
				s.done = true
				s.st.Malformed += s.parser.Malformed() // records naming an illegal topic
				return nil
			}
			if err := s.open(s.files[s.idx]); err != nil {
				return err
			}
			s.idx++
		}
		rec, err := s.nextRecord()
		if err != nil {
			return err
		}
		if rec == nil {
			s.finishFile()
			continue
		}
		s.st.Records++
		// rec is the Splitter's: it stays valid until this stream's next Push.
		s.rec = rec
		if !s.parser.ParseInto(rec, &s.ev) {
			s.fn(s.name, rec, nil)
			continue
		}
		s.ev.File = s.name
		if s.clock.Order(&s.ev, time.Now()) {
			s.st.FutureTimestamps++
		}
		s.st.Parsed++
		s.st.EventCount[s.ev.Type]++
		return nil
	}
}

func (s *stream) open(path string) error {
	lr, c, mapped := openMapped(path)
	if !mapped {
		rc, err := openInput(path, s.stdin)
		if err != nil {
			return err
		}
		lr, c = newLineReader(rc), rc
	}
	// The path as given, not its base name: b1/server.log and b2/server.log are
	// different brokers to the checker.
	s.name, s.rc, s.lr, s.sp, s.eof = path, c, lr, logparse.NewSplitter(), false
	return nil
}

// nextRecord returns the next complete record of the current file.
func (s *stream) nextRecord() (*logparse.Record, error) {
	for !s.eof {
		line, err := s.lr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			s.eof = true
			break
		}
		s.st.Lines++
		if rec := s.sp.Push(line); rec != nil {
			return rec, nil
		}
	}
	return s.sp.Flush(), nil
}

func (s *stream) finishFile() {
	s.st.Malformed += s.sp.Malformed()
	s.st.CutLines += s.lr.cut
	s.close()
}

func (s *stream) close() {
	if s.rc != nil {
		s.rc.Close()
		s.rc = nil
	}
}
