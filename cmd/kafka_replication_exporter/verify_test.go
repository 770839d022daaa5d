package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/genlog"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// runCLI runs the program in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func verifyJSON(t *testing.T, args ...string) (int, verifyReport) {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"verify", "--format=json"}, args...)...)
	var rep verifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("want JSON on stdout, got %q (stderr %q): %v", out, errOut, err)
	}
	return code, rep
}

func invariantOf(rep verifyReport, name string) invariantReport {
	for _, ir := range rep.Invariants {
		if ir.Name == name {
			return ir
		}
	}
	return invariantReport{}
}

// genlogFile writes a synthetic broker log (internal/genlog) and returns its
// path and what it holds.
func genlogFile(t *testing.T, o genlog.Options) (string, genlog.Manifest) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := genlog.Write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

// verify reports exactly what the generator wrote: every event type, every
// invariant's checks and violations, the lines and records read.
func TestVerifyMatchesGenlogManifest(t *testing.T) {
	logPath, m := genlogFile(t, genlog.Options{Lines: 200_000, Seed: 7, Violations: 3})
	code, rep := verifyJSON(t, logPath)
	if code != exitViolation {
		t.Errorf("want exit %d (the generator injects violations), got %d", exitViolation, code)
	}
	if rep.Lines != m.Lines || rep.Records != m.Records || rep.MalformedLines != 0 {
		t.Errorf("want %d lines, %d records, 0 malformed, got %d, %d, %d", m.Lines, m.Records, rep.Lines, rep.Records, rep.MalformedLines)
	}
	for name, want := range m.Events {
		if got := rep.Events[name]; got != want {
			t.Errorf("%s events: want %d, got %d", name, want, got)
		}
	}
	for _, inv := range invariant.Invariants() {
		want, ir := m.Invariants[inv.String()], invariantOf(rep, inv.String())
		if ir.Checked != want.Checked || ir.Violations != want.Violations {
			t.Errorf("%s: want %d checked, %d violations, got %d and %d", inv, want.Checked, want.Violations, ir.Checked, ir.Violations)
		}
		status := statusPassed
		switch {
		case want.Violations > 0 && !inv.Informational():
			status = statusFailed
		case want.Checked == 0:
			status = statusSkipped
		}
		if ir.Status != status {
			t.Errorf("%s: want %s, got %s", inv, status, ir.Status)
		}
	}
	// The mix injects each kind of violation and leaves unclean elections out.
	for name, status := range map[string]string{
		"hw_monotonic": statusFailed, "partition_epoch_monotonic": statusFailed, "min_isr_enforced": statusFailed,
		"isr_change_versioned": statusPassed, "isr_acks_complete": statusPassed, "no_truncation_below_hw": statusPassed,
		"hw_stall_under_min_isr": statusPassed, "no_unclean_election": statusSkipped,
	} {
		if got := invariantOf(rep, name).Status; got != status {
			t.Errorf("%s: want %s, got %s", name, status, got)
		}
	}
	if ex := invariantOf(rep, "hw_monotonic").Examples; len(ex) == 0 || !strings.Contains(ex[0].Text, "High watermark updated") {
		t.Errorf("want the violating HW line quoted, got %+v", ex)
	}
}

func TestVerifyTextReportsLikeTheSeed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "server.log")
	writeFile(t, p, []byte(strings.Join([]string{
		"[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=88, segment=[16:76938]) to (offset=89, segment=[16:78032]) (kafka.cluster.Partition)",
		"[2025-10-16 15:57:12,624] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=89, segment=[16:78032]) to (offset=80, segment=[16:79126]) (kafka.cluster.Partition)",
	}, "\n")+"\n"), 0o644)
	code, out, _ := runCLI(t, "", "verify", p)
	if code != exitViolation {
		t.Errorf("want exit 1, got %d", code)
	}
	for _, want := range []string{"VIOLATION: HW decreased from 89 to 80", p + ":2: ", "FAILED: 1 violations in 2 checks", "SKIPPED: no ISR ack traces found"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the text report, got:\n%s", want, out)
		}
	}
}

// A log line is input from anyone who can reach the broker: its escape
// sequences are shown, not acted on, by the terminal reading the report.
func TestVerifyTextEscapesTerminalControls(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "server.log")
	writeFile(t, p, []byte(strings.Join([]string{
		"[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=88, segment=[16:76938]) to (offset=89, segment=[16:78032]) (kafka.cluster.Partition)",
		"[2025-10-16 15:57:12,624] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=89, segment=[16:78032]) to (offset=80, segment=[\x1b]0;pwned\x07\x1b[2J\r\x7f\xc2\x9b31m\xff:79126]) (kafka.cluster.Partition)",
	}, "\n")+"\n"), 0o644)
	_, out, _ := runCLI(t, "", "verify", p)
	for i := 0; i < len(out); i++ {
		if c := out[i]; c < 0x20 && c != '\n' || c == 0x7f || c == 0xc2 && i+1 < len(out) && out[i+1] == 0x9b || c == 0xff {
			t.Fatalf("want no raw control byte in the report, got %#x at %d in:\n%q", c, i, out)
		}
	}
	if want := `segment=[\x1b]0;pwned\x07\x1b[2J\x0d\x7f\u009b31m\xff:79126]`; !strings.Contains(out, want) {
		t.Errorf("want the line quoted as %s, got:\n%s", want, out)
	}
}

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain [text] (x)":         "plain [text] (x)",
		"tab\there":                `tab\x09here`,
		"utf-8 ü ✓ stays":          "utf-8 ü ✓ stays",
		"\x1b[31mred\x1b[0m":       `\x1b[31mred\x1b[0m`,
		"del\x7f c1\u009b bad\xfe": `del\x7f c1\u009b bad\xfe`,
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q): want %s, got %s", in, want, got)
		}
	}
}

func TestVerifyPassingLogExitsZero(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "server.log")
	writeFile(t, p, []byte("[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=88, segment=[16:76938]) to (offset=89, segment=[16:78032]) (kafka.cluster.Partition)\n"), 0o644)
	if code, _ := verifyJSON(t, p); code != exitOK {
		t.Errorf("want exit 0, got %d", code)
	}
}

// Rotated files are read oldest first, so a sequence split by log4j's hourly roll
// is one sequence again; .gz files are read transparently.
func TestVerifyRotatedFilesInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	hw := func(from, to string) string {
		return "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=" + from + ", segment=[1:1]) to (offset=" + to + ", segment=[1:2]) (kafka.cluster.Partition)\n"
	}
	writeFile(t, filepath.Join(dir, "server.log.2025-10-16-14"), []byte(hw("1", "2")), 0o644)
	writeFile(t, filepath.Join(dir, "server.log.2025-10-16-15.gz"), gzipped(t, []byte(hw("2", "3"))), 0o644)
	writeFile(t, filepath.Join(dir, "server.log"), []byte(hw("3", "4")), 0o644)
	// Named out of order on purpose.
	code, rep := verifyJSON(t, filepath.Join(dir, "server.log"), filepath.Join(dir, "server.log.2025-10-16-15.gz"), filepath.Join(dir, "server.log.2025-10-16-14"))
	if code != exitOK || invariantOf(rep, "hw_monotonic").Checked != 3 {
		t.Errorf("want 3 HW updates passing in order, got exit %d, %+v", code, invariantOf(rep, "hw_monotonic"))
	}
}

func TestOrderInputs(t *testing.T) {
	got := orderInputs([]string{"a/server.log", "a/state-change.log", "a/server.log.2025-10-16-15", "a/server.log.2025-10-16-09", "b/x.log.1", "b/x.log.2", "b/x.log"})
	want := []string{"a/server.log.2025-10-16-09", "a/server.log.2025-10-16-15", "a/server.log", "a/state-change.log", "b/x.log.2", "b/x.log.1", "b/x.log"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("want %v, got %v", want, got)
	}
}

// verify groups rolled files by the follower's rule (tail.RolledName), so
// kubelet's timestamped copies and log4j2's date-and-index names are read
// before their live file, and a name that is no rotation stays its own log.
func TestOrderInputsByTheFollowersRule(t *testing.T) {
	got := orderInputs([]string{"c/0.log", "c/0.log.20251016-155712", "d/server.log", "d/server.log.2025-10-16.2", "d/server.log.2025-10-16.1", "d/server.log.old"})
	want := []string{"c/0.log.20251016-155712", "c/0.log", "d/server.log.2025-10-16.1", "d/server.log.2025-10-16.2", "d/server.log", "d/server.log.old"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("want %v, got %v", want, got)
	}
}

func TestVerifyBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(junk)
	writeFile(t, filepath.Join(dir, "junk.log"), junk, 0o644)
	big := bytes.Repeat([]byte("x"), 50<<20)
	writeFile(t, filepath.Join(dir, "oneline.log"), big, 0o644)

	t.Run("directory", func(t *testing.T) {
		code, _, errOut := runCLI(t, "", "verify", dir)
		if code != exitUsage || !strings.Contains(errOut, "is a directory") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("want exit 2 and one clear line, got %d %q", code, errOut)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		code, _, errOut := runCLI(t, "", "verify", filepath.Join(dir, "nope.log"))
		if code != exitUsage || !strings.Contains(errOut, "no such file") {
			t.Errorf("want exit 2 naming the file, got %d %q", code, errOut)
		}
	})
	t.Run("binary junk is counted, not fatal", func(t *testing.T) {
		code, rep := verifyJSON(t, filepath.Join(dir, "junk.log"))
		if code != exitOK || rep.Lines == 0 || rep.MalformedLines == 0 {
			t.Errorf("want exit 0 with malformed lines counted, got %d lines=%d malformed=%d", code, rep.Lines, rep.MalformedLines)
		}
	})
	t.Run("50 MB single line", func(t *testing.T) {
		code, rep := verifyJSON(t, filepath.Join(dir, "oneline.log"))
		if code != exitOK || rep.Lines != 1 || rep.MalformedLines != 1 {
			t.Errorf("want exit 0, 1 line counted malformed, got %d lines=%d malformed=%d", code, rep.Lines, rep.MalformedLines)
		}
	})
	t.Run("over-long lines count once each", func(t *testing.T) {
		// One over the reader's bound (cut twice: by the reader, then the
		// Splitter) and one over the Splitter's only. The report counts the
		// Splitter's cuts alone, which holds while the reader's bound is the
		// larger.
		if maxLineBytes < logparse.MaxLineBytes {
			t.Fatalf("the reader's bound %d is under the Splitter's %d: cut lines would go uncounted", maxLineBytes, logparse.MaxLineBytes)
		}
		hw := "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"
		p := filepath.Join(dir, "long.log")
		writeFile(t, p, []byte(hw+strings.Repeat("y", 2<<20)+"\n"+"[2025-10-16 15:57:12,615] INFO x"+strings.Repeat(" z", 50<<10)+"\n"), 0o644)
		code, rep := verifyJSON(t, p)
		if code != exitOK || rep.Lines != 3 || rep.MalformedLines != 2 {
			t.Errorf("want exit 0, 3 lines, 2 malformed, got %d lines=%d malformed=%d", code, rep.Lines, rep.MalformedLines)
		}
	})
	t.Run("illegal topic is malformed, not an event", func(t *testing.T) {
		p := filepath.Join(dir, "topic.log")
		writeFile(t, p, []byte("[2025-10-16 15:57:12,614] DEBUG [Partition ord\xff\xfeers-1 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"), 0o644)
		code, rep := verifyJSON(t, p)
		if code != exitOK || rep.Events["hw_update"] != 0 || rep.MalformedLines != 1 {
			t.Errorf("want exit 0, no event, 1 malformed, got %d events=%v malformed=%d", code, rep.Events["hw_update"], rep.MalformedLines)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		code, out, _ := runCLI(t, "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n", "verify", "--format=json", "-")
		if code != exitOK || !strings.Contains(out, `"hw_update":1`) {
			t.Errorf("want one HW update from stdin, got %d %s", code, out)
		}
	})
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"verify"},
		{"--no-such-flag"},
		{"verify", "--format=xml", "x"},
		{"--log.timezone=Mars/Olympus", "verify", "x"},
		{"serve"}, // nothing to follow and no Kafka
		{"serve", "--log.file=x", "--collector.topic-include=("},
		{"serve", "--log.file=x", "--collector.partition-series=some"},
		{"serve", "--log.file=x", "--collector.partition-series=unhealthy", "--no-collector.partition-labels"},
		{"serve", "--log.file=x", "--collector.partition-series=unhealthy"}, // no admin API to tell
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: want exit 2, got %d (stdout %q)", args, code, out)
		}
		if n := strings.Count(strings.TrimSpace(errOut), "\n"); errOut == "" || n != 0 {
			t.Errorf("%v: want one clear line on stderr, got %q", args, errOut)
		}
	}
}

func TestEventsPrintsJSONLines(t *testing.T) {
	code, out, _ := runCLI(t, "[2025-10-16 15:57:12,614] DEBUG [Partition orders-eu-3 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\nnot a kafka line\n", "events")
	if code != exitOK {
		t.Fatalf("want exit 0, got %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("want 1 event, got %q", out)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
		t.Fatalf("want JSON, got %q: %v", lines[0], err)
	}
	if ev["type"] != "hw_update" || ev["topic"] != "orders-eu" || ev["partition"] != float64(3) || ev["to"] != float64(2) {
		t.Errorf("want hw_update orders-eu/3 to 2, got %v", ev)
	}
}

// server.log and state-change.log are merged by time: a follower line logged
// after a legitimate truncation must not be taken as the HW the truncation went
// below (a false alarm if the files were read one after the other).
func TestVerifyMergesFilesByTime(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server.log")
	state := filepath.Join(dir, "state-change.log")
	writeFile(t, server, []byte(strings.Join([]string{
		"[2025-10-16 15:00:00,000] INFO [Partition t-0 broker=1] Log loaded for partition t-0 with initial high watermark 250 (kafka.cluster.Partition)",
		"[2025-10-16 15:00:02,000] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition t-0 with TruncationState(offset=300, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, endOffset=300) (kafka.server.ReplicaFetcherThread)",
	}, "\n")+"\n"), 0o644)
	writeFile(t, state, []byte("[2025-10-16 15:00:09,000] INFO [Broker id=1] Follower t-0 starts at leader epoch 4 from offset 500 with partition epoch 9 and high watermark 500. Current leader is 2. Previous leader Some(2) and previous leader epoch was 4. (state.change.logger)\n"), 0o644)
	code, rep := verifyJSON(t, state, server) // state-change.log named first on purpose
	if code != exitOK || invariantOf(rep, "no_truncation_below_hw").Violations != 0 {
		t.Errorf("want no truncation below HW, got exit %d %+v", code, invariantOf(rep, "no_truncation_below_hw"))
	}
}

// log4j2's default numbering (server.log.1 oldest) and log4j 1.2's (server.log.1
// newest) disagree, so numbered files are read by modification time.
func TestVerifyNumberedRollsByModTime(t *testing.T) {
	dir := t.TempDir()
	hw := func(from, to string) string {
		return "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=" + from + ", segment=[1:1]) to (offset=" + to + ", segment=[1:2]) (kafka.cluster.Partition)\n"
	}
	base := time.Now().Add(-time.Hour)
	for i, f := range []struct{ name, from, to string }{{"server.log.1", "1", "2"}, {"server.log.2", "2", "3"}, {"server.log", "3", "4"}} {
		p := filepath.Join(dir, f.name)
		writeFile(t, p, []byte(hw(f.from, f.to)), 0o644)
		mt := base.Add(time.Duration(i) * time.Minute)
		setMtime(t, p, mt)
	}
	code, rep := verifyJSON(t, filepath.Join(dir, "server.log"), filepath.Join(dir, "server.log.1"), filepath.Join(dir, "server.log.2"))
	if code != exitOK || invariantOf(rep, "hw_monotonic").Violations != 0 {
		t.Errorf("want log4j2-numbered files read oldest first, got exit %d %+v", code, invariantOf(rep, "hw_monotonic"))
	}
}

// The real broker logs of the e2e scenarios (internal/logparse/testdata/real-*.log):
// only the unclean-election scenario may fail, and exactly on the invariants it
// breaks — on every Kafka version. Every other real log is a healthy cluster
// (failover, ISR churn, min-ISR rejections) and must not raise a false alarm.
func TestVerifyRealBrokerLogs(t *testing.T) {
	logs, _ := filepath.Glob("../../internal/logparse/testdata/real-*.log")
	if len(logs) < 10 {
		t.Fatalf("want the real-broker fixtures, found %d", len(logs))
	}
	wantFailed := map[string]string{
		"real-3.9.1-unclean-controller.log":    "no_unclean_election",
		"real-4.1.1-unclean-controller.log":    "no_unclean_election",
		"real-3.9.1-unclean-old-leader.log":    "no_truncation_below_hw",
		"real-4.1.1-unclean-old-leader.log":    "no_truncation_below_hw",
		"real-4.4.0-unclean-controller.log":    "no_unclean_election",
		"real-4.4.0-unclean-old-leader.log":    "no_truncation_below_hw",
		"real-3.9.1-zk-unclean-controller.log": "no_unclean_election", // ZooKeeper mode: state-change.log
	}
	for _, p := range logs {
		_, rep := verifyJSON(t, p)
		var failed []string
		for _, ir := range rep.Invariants {
			if ir.Status == statusFailed {
				failed = append(failed, ir.Name)
			}
		}
		want := wantFailed[filepath.Base(p)]
		if got := strings.Join(failed, ","); got != want {
			t.Errorf("%s: want failed [%s], got [%s]", filepath.Base(p), want, got)
		}
	}
}

// docker compose output of two brokers interleaves their lines: each
// NotEnoughReplicas exception joins the header of its own broker, and every
// rejection is counted (read through to the end of the file).
func TestVerifyMergedComposeLog(t *testing.T) {
	code, rep := verifyJSON(t, "../../internal/logparse/testdata/layout-compose-interleaved.log")
	if code != exitOK || rep.Events["produce_rejected_min_isr"] != 3 || rep.Events["hw_update"] != 1 || rep.MalformedLines != 0 {
		t.Errorf("want exit 0, 3 rejections, 1 HW update, 0 malformed, got %d %v %d", code, rep.Events, rep.MalformedLines)
	}
}

// The KRaft metadata log's HW going back is its own invariant: the quorum
// leader's "latest computed high watermark … is smaller than the current
// value" fails it, once per current HW however often the leader repeats it,
// and a real election (a leadership, no such line) passes it.
func TestVerifyMetadataHWRegression(t *testing.T) {
	code, rep := verifyJSON(t, "../../internal/logparse/testdata/quorum-lines.log")
	ir := invariantOf(rep, "metadata_hw_monotonic")
	if code != exitViolation || ir.Status != statusFailed || ir.Violations != 1 || len(ir.Examples) != 1 ||
		!strings.Contains(ir.Examples[0].Text, "The latest computed high watermark 41 is smaller than the current value 57") {
		t.Errorf("want exit 1 and one metadata HW regression quoted, got exit %d %+v", code, ir)
	}
	for _, other := range rep.Invariants {
		if other.Name != "metadata_hw_monotonic" && other.Status == statusFailed {
			t.Errorf("%s failed too: %+v", other.Name, other)
		}
	}

	regressed := func(current, computed int) string {
		return fmt.Sprintf("[2026-12-04 18:10:00,002] INFO [RaftManager id=102] The latest computed high watermark %d is smaller than the current value %d, "+
			"which should only happen when voter set membership changes. (org.apache.kafka.raft.LeaderState)\n", computed, current)
	}
	leader := "[2026-12-04 18:10:00,000] INFO [RaftManager id=102] Completed transition to Leader(localReplicaKey=ReplicaKey(id=102, directoryId=Optional.empty), " +
		"epoch=3, epochStartOffset=0, highWatermark=Optional.empty, voterStates={}) from CandidateState(localId=102, epoch=3) (org.apache.kafka.raft.QuorumState)\n"
	p := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, p, []byte(leader+regressed(57, 41)+regressed(57, 41)+regressed(57, 44)+regressed(60, 44)+leader+regressed(60, 44)), 0o644)
	_, rep = verifyJSON(t, p)
	if ir := invariantOf(rep, "metadata_hw_monotonic"); ir.Checked != 7 || ir.Violations != 3 {
		t.Errorf("want 7 checks (2 leaderships, 5 lines), 3 regressions (current HW 57, 60, 60 again in a new leadership), got %+v", ir)
	}

	// The resignation captures: a leader that lost its majority, resigned
	// and was leader again checks both leaderships, and neither regresses.
	for _, c := range []struct {
		fixture     string
		leaderships int64
	}{
		{"4.4.0-quorum-new-leader", 1},
		{"3.9.1-quorum-new-leader", 1},
		{"4.1.1-quorum-new-leader", 1},
		{"4.4.0-quorum-resign", 2},
		{"3.9.1-quorum-resign", 2},
	} {
		code, rep := verifyJSON(t, "../../internal/logparse/testdata/real-"+c.fixture+".log")
		if ir := invariantOf(rep, "metadata_hw_monotonic"); code != exitOK || ir.Status != statusPassed || ir.Checked != c.leaderships {
			t.Errorf("%s: want %d real leaderships checked and passing, got exit %d %+v", c.fixture, c.leaderships, code, ir)
		}
	}
}
