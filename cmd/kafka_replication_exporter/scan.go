package main

import (
	"fmt"
	"io"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// scanStats counts what the offline commands read.
type scanStats struct {
	Lines      int64 // physical lines
	Records    int64 // records (a header plus its continuation lines)
	Parsed     int64 // records that were a replication event
	Malformed  int64 // lines dropped as junk (orphans, binary, cut parts)
	CutLines   int64 // lines over maxLineBytes
	FilesRead  int
	EventCount [256]int64
}

// scanFunc receives every record of every file, parsed or not. ev is nil when
// the record is not a replication event. rec and ev are only valid during the call.
type scanFunc func(file string, rec *logparse.Record, ev *logparse.Event)

// scanFiles reads the files in rotation order and feeds each record through the
// parser. It is the offline twin of the sidecar's follower loop.
func scanFiles(paths []string, loc *time.Location, stdin io.Reader, fn scanFunc) (*scanStats, error) {
	st := &scanStats{}
	parser := logparse.NewParser(loc)
	for _, path := range orderInputs(paths) {
		if err := scanFile(path, parser, stdin, st, fn); err != nil {
			return st, err
		}
		st.FilesRead++
	}
	return st, nil
}

func scanFile(path string, parser *logparse.Parser, stdin io.Reader, st *scanStats, fn scanFunc) error {
	rc, err := openInput(path, stdin)
	if err != nil {
		return err
	}
	defer rc.Close()
	// The path as given, not its base name: b1/server.log and b2/server.log are
	// different brokers to the checker.
	name := path
	sp := logparse.NewSplitter()
	lr := newLineReader(rc)
	handle := func(rec logparse.Record) {
		st.Records++
		ev, ok := parser.Parse(rec)
		if !ok {
			fn(name, &rec, nil)
			return
		}
		ev.File = name
		st.Parsed++
		st.EventCount[ev.Type]++
		fn(name, &rec, &ev)
	}
	for {
		line, err := lr.next()
		if err != nil {
			if err != io.EOF {
				return fmt.Errorf("%s: %w", path, err)
			}
			break
		}
		st.Lines++
		if rec, ok := sp.Push(line); ok {
			handle(rec)
		}
	}
	if rec, ok := sp.Flush(); ok {
		handle(rec)
	}
	st.Malformed += sp.Malformed()
	st.CutLines += lr.cut
	return nil
}
