package logstate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// appendLines appends lines to path.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

const leaderStart = "[2026-11-30 10:00:0%s,000] INFO [Broker id=1] Leader orders-0 with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch %s from offset 10 with partition epoch %s, high watermark 10, ISR [1,2,3], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)"

// Live, a leader line in state-change.log and the ISR lines that follow it in
// server.log, written within one poll, are applied in log-time order, not in
// the order the files are read: the ISR shrinks and expands are counted
// against the leader's ISR.
func TestLiveLinesOfOnePollAreAppliedInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	server, stateChange := filepath.Join(dir, "server.log"), filepath.Join(dir, "state-change.log")
	appendLines(t, server)
	appendLines(t, stateChange)
	s := NewStore(nil)
	var files []*LogFile
	for _, p := range []string{server, stateChange} { // server.log first: read first
		files = append(files, NewLogFile(p, LogFileOptions{Location: time.UTC, PollInterval: time.Nanosecond}))
	}
	stream := NewStream(s, files, time.Nanosecond)
	drain(stream) // both files followed from their (empty) end
	appendLines(t, server, line(isrUpd, "2", "orders-0", "1,2", "6"), line(isrUpd, "3", "orders-0", "1,2,3", "7"))
	appendLines(t, stateChange, line(leaderStart, "1", "4", "5"))
	drain(stream)
	p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]
	if p.Counters[LeaderTransitions] != 1 || p.Counters[ISRShrinks] != 1 || p.Counters[ISRExpands] != 1 || p.Counters[EpochRegressions] != 0 {
		t.Errorf("want the leader line first, then one shrink and one expand, no regression; got %+v", p.Counters)
	}
}

// One line stamped in the year 9999 neither freezes the gauges (the lines
// after it still set them) nor holds its file back; it is counted.
func TestFutureTimestampDoesNotFreezeState(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server.log")
	appendLines(t, server,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		"[9999-01-01 00:00:00,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to 6 (kafka.cluster.Partition)",
		line(isrUpd, "3", "orders-0", "1", "7"),
		"[2026-11-30 10:00:04,000] DEBUG [Partition orders-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)",
	)
	s := NewStore(nil)
	f := NewLogFile(server, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
	drain(NewStream(s, []*LogFile{f}, time.Nanosecond))
	p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]
	if !p.HasISR || p.ISRSize != 1 || p.HW != 2 {
		t.Errorf("want the last lines' ISR 1 and HW 2, got %+v", p)
	}
	if p.Counters[ISRShrinks] != 2 || p.Counters[EpochRegressions] != 0 {
		t.Errorf("want two shrinks and no regression, got %+v", p.Counters)
	}
	if n := f.Stats().FutureTimestamps; n != 1 {
		t.Errorf("want 1 future timestamp counted, got %d", n)
	}
}

// Catching up reads a bounded slice of each file at a time: however long
// the backlog, only about readBudget bytes of events wait in memory per file.
func TestCatchUpHoldsABoundedQueue(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "server.log")
	if err := traceMix(src, 60_000, 100); err != nil {
		t.Fatal(err)
	}
	s := NewStore(nil)
	f := NewLogFile(src, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
	stream := NewStream(s, []*LogFile{f}, time.Nanosecond)
	most := 0
	for stream.Step() {
		most = max(most, len(f.queue))
	}
	if st := f.Stats(); st.Records != 60_000 {
		t.Fatalf("want 60000 records applied, got %d", st.Records)
	}
	// A TRACE line is ~200 bytes: a 128 KiB read holds about 700 events.
	if most > readBudget/100 {
		t.Errorf("want at most %d events waiting, saw %d", readBudget/100, most)
	}
	if !stream.CaughtUp() {
		t.Error("want caught up")
	}
}

// Caught up means applied, not only read: the last record of the backlog,
// held until the file is quiet for a poll interval, must be applied first.
func TestCaughtUpWaitsForTheHeldRecord(t *testing.T) {
	server := filepath.Join(t.TempDir(), "server.log")
	appendLines(t, server, line(isrUpd, "1", "orders-0", "1,2,3", "5"), line(isrUpd, "2", "orders-0", "1,2", "6"))
	s := NewStore(nil)
	f := NewLogFile(server, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Hour})
	stream := NewStream(s, []*LogFile{f}, time.Hour)
	stream.Step()
	if stream.CaughtUp() {
		t.Fatal("want not caught up while the backlog's last record is held")
	}
	f.quiet = 0 // the poll interval has passed
	stream.Step()
	if !stream.CaughtUp() || f.Stats().Records != 2 {
		t.Errorf("want caught up with both records applied, got %v, %d records", stream.CaughtUp(), f.Stats().Records)
	}
}

// A record that keeps getting continuation lines (a writer appending a
// stack trace a line at a time, less than a poll interval apart) is applied
// after about a poll interval all the same: it must not hold back the events
// of the other files for as long as it grows. Its later continuation lines
// belong to it: they are not malformed.
func TestEndlessRecordDoesNotHoldOtherFilesBack(t *testing.T) {
	dir := t.TempDir()
	server, stateChange := filepath.Join(dir, "server.log"), filepath.Join(dir, "state-change.log")
	appendLines(t, server)
	appendLines(t, stateChange)
	const poll = 50 * time.Millisecond
	s := NewStore(nil)
	var files []*LogFile
	for _, p := range []string{server, stateChange} {
		files = append(files, NewLogFile(p, LogFileOptions{Location: time.UTC, PollInterval: poll}))
	}
	stream := NewStream(s, files, poll)
	drain(stream)
	appendLines(t, server, "[2026-11-30 10:00:00,000] ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition orders-0 (kafka.server.ReplicaFetcherThread)")
	appendLines(t, stateChange, line(leaderStart, "1", "4", "5"))
	leaders := func() uint64 {
		return partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}].Counters[LeaderTransitions]
	}
	start := time.Now()
	var appliedAfter time.Duration
	for i := 0; time.Since(start) < 20*poll; i++ {
		appendLines(t, server, fmt.Sprintf("\tat kafka.server.ReplicaFetcherThread.frame%d(ReplicaFetcherThread.scala:%d)", i, i))
		drain(stream)
		if appliedAfter == 0 && leaders() == 1 {
			appliedAfter = time.Since(start)
		}
		time.Sleep(poll / 5)
	}
	if appliedAfter == 0 || appliedAfter > 10*poll {
		t.Fatalf("the leader line of state-change.log waited %v (0: still waiting) behind a record that kept growing; want about a poll interval (%v)", appliedAfter, poll)
	}
	time.Sleep(2 * poll)
	drain(stream)
	if st := files[0].Stats(); st.Malformed != 0 || st.Records != 1 {
		t.Errorf("want the growing record applied once, none of its lines malformed, got %d records, %d malformed", st.Records, st.Malformed)
	}
}
