package tail

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An appender rolls the live file the way one logging library does.
type appender struct {
	name string
	roll func(t *testing.T, path string, max int, serial int)
}

var appenders = []appender{
	// log4j 1.x RollingFileAppender (Kafka 3.x with reload4j), logrotate and
	// log4j2 with fileIndex="min": .1 is the newest; every roll renames
	// .i to .i+1 and drops the one past max.
	{"log4j 1.x", func(t *testing.T, path string, max, _ int) {
		os.Remove(fmt.Sprintf("%s.%d", path, max))
		for i := max - 1; i >= 1; i-- {
			renameIfExists(t, fmt.Sprintf("%s.%d", path, i), fmt.Sprintf("%s.%d", path, i+1))
		}
		mustRename(t, path, path+".1")
	}},
	// log4j2's DefaultRolloverStrategy with the default fileIndex="max"
	// (Kafka 4.x): .1 is the oldest; when max files exist, .1 is dropped
	// and the others move down one.
	{"log4j2 max", func(t *testing.T, path string, max, _ int) {
		n := 0
		for n < max && exists(fmt.Sprintf("%s.%d", path, n+1)) {
			n++
		}
		if n == max {
			os.Remove(path + ".1")
			for i := 2; i <= max; i++ {
				mustRename(t, fmt.Sprintf("%s.%d", path, i), fmt.Sprintf("%s.%d", path, i-1))
			}
			n--
		}
		mustRename(t, path, fmt.Sprintf("%s.%d", path, n+1))
	}},
	// DailyRollingFileAppender: the date in the name.
	{"log4j daily", func(t *testing.T, path string, _, serial int) {
		mustRename(t, path, fmt.Sprintf("%s.2025-10-16-%02d", path, serial))
	}},
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func renameIfExists(t *testing.T, from, to string) {
	t.Helper()
	if exists(from) {
		mustRename(t, from, to)
	}
}

// mtime modes: how the files' modification times look at the restart.
const (
	mtimesAsWritten = "mtimes as written" // nanoseconds apart: content decides
	mtimesDistinct  = "distinct mtimes"   // seconds apart, in roll order
	mtimesEqual     = "equal mtimes"      // a copy or restore: content decides
	// The files rolled while down share one mtime (coarse timestamps) and
	// their lines carry no timestamp a reader knows: the names decide, in
	// the convention the older files show.
	mtimesRecentEqualNoTimestamps = "recent equal mtimes, no line timestamps"
)

// TestResumeAfterRollsWhileDown guards against losing the lines of files
// that rolled while the exporter was down: it stops in the middle of the
// live file, the log rolls 1, 2 or 3 times while it is down, and the restart must read the rest of the saved file, every file
// rolled after it in order, then the live file: each line exactly once, for
// every numbering convention and whatever the mtimes say.
func TestResumeAfterRollsWhileDown(t *testing.T) {
	modes := []string{mtimesAsWritten, mtimesDistinct, mtimesEqual, mtimesRecentEqualNoTimestamps}
	for _, ap := range appenders {
		for _, mode := range modes {
			for rolls := 1; rolls <= 3; rolls++ {
				for _, max := range []int{4, 10} {
					name := fmt.Sprintf("%s/%s/%d rolls/max %d", ap.name, mode, rolls, max)
					t.Run(name, func(t *testing.T) { resumeAfterRolls(t, ap, mode, rolls, max, true) })
				}
			}
		}
	}
}

// TestFollowRollsBetweenPolls is the same while the exporter runs: the
// rolls happen between two polls.
func TestFollowRollsBetweenPolls(t *testing.T) {
	for _, ap := range appenders {
		for _, mode := range []string{mtimesAsWritten, mtimesEqual} {
			for rolls := 1; rolls <= 3; rolls++ {
				name := fmt.Sprintf("%s/%s/%d rolls", ap.name, mode, rolls)
				t.Run(name, func(t *testing.T) { resumeAfterRolls(t, ap, mode, rolls, 4, false) })
			}
		}
	}
}

// resumeAfterRolls stops (down) or only pauses polling in the middle of the
// live file, rolls it, and checks every line after the stop arrives once.
func resumeAfterRolls(t *testing.T, ap appender, mode string, rolls, max int, down bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	w := newLogWriter(t, path, uint64(rolls))
	defer w.close()
	if mode == mtimesRecentEqualNoTimestamps {
		w.prefix = "no timestamp here "
	}
	serial := 0
	roll := func() {
		w.f.Close()
		ap.roll(t, path, max, serial)
		serial++
		w.create()
	}
	// Two rolls before the exporter ever ran: older files it must not read.
	w.write(100)
	roll()
	w.write(100)
	roll()
	w.write(100)
	seq := &sequence{t: t, prefix: w.prefix, exact: true, next: 200}
	rest := w.writeHalf()
	var f *Follower
	if down {
		stopAt(t, path, seq, store)
	} else {
		f = New(path, Options{LineTime: lineTime, FromBeginning: true})
		defer f.Close()
		mustPoll(t, f, seq.deliver)
	}
	w.writeRaw(rest)
	w.write(30) // lands in the saved file after the position
	for i := range rolls {
		roll()
		w.write(40 + i)
	}

	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	rolled := rolledNames(path)
	firstLine := func(name string) int {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := lineNumber(data)
		if !ok {
			t.Fatalf("%s has no numbered line", name)
		}
		return n
	}
	slices.SortFunc(rolled, func(a, b string) int { return firstLine(a) - firstLine(b) }) // true order
	for i, name := range rolled {
		var mt time.Time
		switch mode {
		case mtimesAsWritten:
			continue
		case mtimesDistinct:
			mt = base.Add(time.Duration(i) * 10 * time.Second)
		case mtimesEqual:
			mt = base
		case mtimesRecentEqualNoTimestamps:
			mt = base.Add(time.Duration(min(i, len(rolled)-rolls)) * 10 * time.Second)
		}
		if err := os.Chtimes(name, mt, mt); err != nil {
			t.Fatal(err)
		}
	}

	if down {
		f = restart(t, path, seq, store)
		defer f.Close()
	} else {
		mustPoll(t, f, seq.deliver)
	}
	if want := w.next - 200; seq.seen != want {
		t.Fatalf("delivered %d lines, want %d (files, oldest first: %v)", seq.seen, want, rolled)
	}
	if st := f.Stats(); st.ResumeMisses != 0 {
		t.Fatalf("stats %+v", st)
	}
	w.write(5)
	mustPoll(t, f, seq.deliver)
	if seq.next != w.next {
		t.Fatalf("after the restart: last line %d of %d", seq.next-1, w.next-1)
	}
}

// SortRolled, which verify uses, gives the same order as the follower.
func TestSortRolled(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "server.log")
	write := func(suffix string, firstLine int, mtime time.Time) string {
		name := base + suffix
		if err := os.WriteFile(name, []byte(kafkaLine(firstLine)), 0o644); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(name, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		return name
	}
	same := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name  string
		files map[string]int // suffix: first line number (age)
	}{
		{"log4j 1.x", map[string]int{".1": 3000, ".2": 2000, ".3": 1000}},
		{"log4j2 max", map[string]int{".1": 1000, ".2": 2000, ".3": 3000}},
		{"dated", map[string]int{".2025-10-16-09": 1000, ".2025-10-16-10": 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for suffix, n := range tc.files {
				names = append(names, write(suffix, n, same))
			}
			want := slices.Clone(names)
			slices.SortFunc(want, func(a, b string) int {
				return tc.files[strings.TrimPrefix(a, base)] - tc.files[strings.TrimPrefix(b, base)]
			})
			SortRolled(names, nil, lineTime)
			equal(t, "order", names, want)
			for _, n := range names {
				os.Remove(n)
			}
		})
	}
	// Dated names sort as they read, whatever a copy did to the mtimes.
	older := write(".2025-10-16-09", 1000, same.Add(time.Minute))
	newer := write(".2025-10-16-10", 2000, same)
	names := []string{newer, older}
	SortRolled(names, nil, lineTime)
	equal(t, "dated, mtimes reversed", names, []string{older, newer})

	// Names only (the files do not exist): dates as they read, numbers in
	// log4j 1.x's convention.
	names = []string{base + ".1", base + ".3", base + ".2"}
	SortRolled(names, nil, lineTime)
	equal(t, "names only", names, []string{base + ".3", base + ".2", base + ".1"})
}

// The first timestamp is found after the tail of a stack trace, in any
// layout logparse knows and inside a container envelope.
func TestFirstLineTime(t *testing.T) {
	for head, want := range map[string]string{
		"\tat x\n\tat y\n[2025-10-16 15:57:12,614] INFO z\n":                                                                    "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:13.5Z stdout F \tat x\n2025-10-16T15:57:13.6Z stdout F 2025-10-16 15:57:12,614 INFO z (a.B) [main]\n": "2025-10-16T15:57:12.614Z",
		"no timestamp here\n[2025-10-16 15:57:1":                                                                                "",
	} {
		got := firstLineTime([]byte(head), lineTime)
		if got.IsZero() != (want == "") || !got.IsZero() && got.Format(time.RFC3339Nano) != want {
			t.Errorf("firstLineTime(%q) = %v, want %q", head, got, want)
		}
	}
}

// RolledName is the one rule for rolled names, used by the follower
// (rolledNames) and by verify's grouping of its arguments.
func TestRolledName(t *testing.T) {
	for name, want := range map[string]string{
		"server.log.1":                                "server.log",
		"/var/log/kafka/server.log.12":                "/var/log/kafka/server.log",
		"server.log.2025-10-16-14":                    "server.log",
		"server.log.2025-10-16-14.gz":                 "server.log (compressed)",
		"server.log.3.zst":                            "server.log (compressed)",
		"/var/log/pods/x/kafka/0.log.20251016-155712": "/var/log/pods/x/kafka/0.log",
		"server.log.20251016":                         "server.log",
		"server.log":                                  "",
		"server.log.tmp":                              "",
		"server.log.1.tmp":                            "",
		"server.log.old":                              "",
		"server.log.":                                 "",
		"server.log.-1":                               "",
		"/a.1/server.log":                             "",
		".1":                                          "",
		"-":                                           "",
	} {
		live, _, compressed, ok := RolledName(name)
		got := live
		if compressed {
			got += " (compressed)"
		}
		if ok != (want != "") || got != want {
			t.Errorf("RolledName(%q) = %q, %v, %v; want %q", name, live, compressed, ok, want)
		}
	}
}

// risingPairs, the O(n log n) vote, counts what comparing every pair counts.
func TestRisingPairsCountsEveryPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		rs := make([]ranked, rng.IntN(40))
		for i := range rs {
			rs[i] = ranked{n: rng.IntN(12), rank: int64(rng.IntN(8))}
		}
		want := 0
		for i := range rs {
			for j := range rs {
				if rs[i].rank < rs[j].rank && rs[i].n != rs[j].n {
					if rs[i].n < rs[j].n {
						want++
					} else {
						want--
					}
				}
			}
		}
		in := slices.Clone(rs)
		if got := risingPairs(rs); got != want {
			t.Fatalf("risingPairs(%v) = %d, want %d", in, got, want)
		}
	}
}

// Ordering 100,000 numbered siblings (a rotation with a retention that keeps
// them) takes O(n log n), not the square: it compared every pair of numbers
// once, 20 s per rotation. The bound leaves a loaded 2-core machine a wide
// margin over what it takes (docs/benchmarks.md); the files are in memory
// (mtimes chained within a second, first lines read) so the test measures
// the ordering, not the disk.
func TestOrderManyRolledSiblings(t *testing.T) {
	const n = 100_000
	base := time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC)
	files := make([]*rolledFile, n)
	for i := range files {
		// log4j2's default numbering: .1 oldest.
		files[i] = newRolledFile(fmt.Sprintf("server.log.%d", i+1), strconv.Itoa(i+1), fakeInfo{mtime: base.Add(time.Duration(i) * time.Microsecond)}, nil, lineTime)
		files[i].firstTime, files[i].firstKnown = base.Add(time.Duration(i)*time.Millisecond), true
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(n, func(i, j int) { files[i], files[j] = files[j], files[i] })
	start := time.Now()
	orderRolled(files)
	took := time.Since(start)
	for i, rf := range files {
		if rf.index != i+1 {
			t.Fatalf("position %d holds %s", i, rf.name)
		}
	}
	t.Logf("ordered %d siblings in %s", n, took)
	if took > 5*time.Second {
		t.Fatalf("ordering %d siblings took %s, want well under 5s", n, took)
	}
}

// fakeInfo is an os.FileInfo with only a modification time.
type fakeInfo struct {
	os.FileInfo
	mtime time.Time
}

func (f fakeInfo) ModTime() time.Time { return f.mtime }
