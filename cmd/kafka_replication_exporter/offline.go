package main

import (
	"io"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// maxLineBytes bounds the memory one physical line may take: the follower's
// bound. The rest of a longer line is skipped and the line is reported as
// cut, so a 50 MB junk line costs 1 MiB, not 50 MB.
const maxLineBytes = tail.DefaultMaxLineBytes

// orderInputs is groupInputs flattened: every file in the order it is read.
func orderInputs(paths []string) []string {
	var out []string
	for _, g := range groupInputs(paths) {
		out = append(out, g...)
	}
	return out
}

// groupInputs groups rotated files by the log they belong to, in the order they
// were written: for every base name, its rolled files (tail.RolledName, the
// follower's rule) oldest first (in the follower's order, tail.SortRolled),
// then the live file. Groups keep the order in which the user named them; stdin ("-") is
// a group of its own.
func groupInputs(paths []string) [][]string {
	type group struct {
		base   string
		rolled []string
		live   []string
	}
	var groups []*group
	byBase := map[string]*group{}
	for _, p := range paths {
		base, rolled := p, false
		if live, _, _, ok := tail.RolledName(p); ok && p != "-" {
			base, rolled = live, true
		}
		g := byBase[base]
		if g == nil || p == "-" {
			g = &group{base: base}
			groups = append(groups, g)
			if p != "-" {
				byBase[base] = g
			}
		}
		if rolled {
			g.rolled = append(g.rolled, p)
		} else {
			g.live = append(g.live, p)
		}
	}
	out := make([][]string, 0, len(groups))
	for _, g := range groups {
		tail.SortRolled(g.rolled, tail.OpenContent, logstate.LineTime)
		out = append(out, append(g.rolled, g.live...))
	}
	return out
}

// checkInputs refuses, before anything is read, a path that is missing or
// is not a regular file: a directory, a named pipe, or a device such as a
// rotated name linking to /dev/zero, which would be read forever. Only "-"
// reads a stream.
func checkInputs(paths []string) error {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		f, _, err := tail.OpenRegular(p)
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

// scanStats counts what the offline commands read.
type scanStats struct {
	Lines     uint64 // physical lines
	Records   uint64 // records (a header plus its continuation lines)
	Parsed    uint64 // records that were a replication event
	Malformed uint64 // lines dropped as junk (orphans, binary, cut parts)
	// FutureTimestamps counts events stamped far in the future, ordered
	// as their file's previous event (logparse.FileClock).
	FutureTimestamps uint64
	EventCount       [256]uint64
}

// eventFunc receives every event in log-time order with the first line of
// its record; both are only valid during the call.
type eventFunc func(ev *logparse.Event, first []byte)

// readLogs reads the files to their end through the pipeline serve follows
// them with (logstate.ReadToEnd): each group of groupInputs is one followed
// log, its rolled files read before it, and the logs are merged by event
// time, so the checker sees a leader change in state-change.log before the
// HW lines that follow it in server.log. allFields reads every field of
// every line, for `events` (logstate.LogFileOptions.AllFields).
func readLogs(paths []string, loc *time.Location, stdin io.Reader, allFields bool, fn eventFunc) (*scanStats, error) {
	st := &scanStats{}
	if err := checkInputs(paths); err != nil {
		return st, err
	}
	var files []*logstate.LogFile
	for _, g := range groupInputs(paths) {
		last := len(g) - 1
		files = append(files, logstate.NewLogFile(g[last], logstate.LogFileOptions{
			ToEnd:     true,
			Before:    g[:last],
			Stdin:     stdin,
			Location:  loc,
			AllFields: allFields,
		}))
	}
	err := logstate.ReadToEnd(files, func(ev *logparse.Event, first []byte) {
		st.Parsed++
		st.EventCount[ev.Type]++
		fn(ev, first)
	})
	for _, f := range files {
		c := f.ReadCounts()
		st.Lines += c.Lines
		st.Records += c.Records
		st.Malformed += c.Malformed
		st.FutureTimestamps += c.FutureTimestamps
	}
	return st, err
}
