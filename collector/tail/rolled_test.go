package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestResumeAfterRollsWhileDown is issue 14's data loss: the exporter stops
// in the middle of the live file, the log rolls 1, 2 or 3 times while it is
// down, and the restart must read the rest of the saved file, every file
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
		f = New(path, Options{FromBeginning: true})
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
			os.Chtimes(name, mtime, mtime)
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
			SortRolled(base, names, nil)
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
	SortRolled(base, names, nil)
	equal(t, "dated, mtimes reversed", names, []string{older, newer})

	// Names only (the files do not exist): dates as they read, numbers in
	// log4j 1.x's convention.
	names = []string{base + ".1", base + ".3", base + ".2"}
	SortRolled(base, names, nil)
	equal(t, "names only", names, []string{base + ".3", base + ".2", base + ".1"})
}

func TestLineTime(t *testing.T) {
	for line, want := range map[string]string{
		"[2025-10-16 15:57:12,614] INFO x":                      "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:12.614123456Z stdout F [2025-10-16 1": "2025-10-16T15:57:12.614123456Z",
		"\tat kafka.Foo(Foo.scala:1)":                           "",
		"[2025-10-16 15:57:1":                                   "",
		"":                                                      "",
	} {
		got, ok := lineTime([]byte(line))
		if ok != (want != "") || ok && got.Format(time.RFC3339Nano) != want {
			t.Errorf("lineTime(%q) = %v, %v; want %q", line, got, ok, want)
		}
	}
	if got := firstLineTime([]byte("\tat x\n\tat y\n[2025-10-16 15:57:12,614] INFO z\n")); got.IsZero() {
		t.Error("the first timestamped line after a stack trace's tail was not found")
	}
}
