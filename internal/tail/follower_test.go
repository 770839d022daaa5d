package tail

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lines collects delivered lines (copied: the slice is only valid during
// the call).
type lines []string

func (l *lines) deliver(b []byte) { *l = append(*l, string(b)) }

func (l *lines) take() []string {
	out := *l
	*l = nil
	return out
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestPartialLineIsHeldUntilItsNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "")
	var got lines
	f := New(path, Options{LineTime: lineTime})
	defer f.Close()
	mustPoll(t, f, got.deliver)

	writeFile(t, path, "[2025-10-16 15:57:12,614] INFO first ha")
	mustPoll(t, f, got.deliver)
	equal(t, "after the first half", got.take(), nil)
	if off := f.Position().Offset; off != 0 {
		t.Fatalf("position %d covers an undelivered partial line", off)
	}
	writeFile(t, path, "lf\r\nsecond\n")
	mustPoll(t, f, got.deliver)
	equal(t, "after the second half", got.take(), []string{"[2025-10-16 15:57:12,614] INFO first half", "second"})
	if st := f.Stats(); st.Lines != 2 || st.Offset != 50 || f.Position().Offset != 50 {
		t.Fatalf("stats %+v, position %+v", st, f.Position())
	}
}

func TestStartsAtTheEndByDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "old 1\nold 2\nbeing writ")
	var got lines
	f := New(path, Options{LineTime: lineTime})
	defer f.Close()
	mustPoll(t, f, got.deliver)
	writeFile(t, path, "ten\nnew 1\n")
	mustPoll(t, f, got.deliver)
	// The line being written at start began before us: not ours.
	equal(t, "lines", got.take(), []string{"new 1"})

	g := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer g.Close()
	mustPoll(t, g, got.deliver)
	equal(t, "from the beginning", got.take(), []string{"old 1", "old 2", "being written", "new 1"})
}

func TestFileAbsentAtStartIsWaitedForAndReadFromZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	var got lines
	f := New(path, Options{LineTime: lineTime}) // default "end of file" applies to a file present at start only
	defer f.Close()
	if err := f.Poll(got.deliver); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Poll without the file = %v", err)
	}
	if st := f.Stats(); st.Ready || st.Reason != ReasonNotFound {
		t.Fatalf("without a file: %+v", st)
	}
	writeFile(t, path, "a\nb\n")
	mustPoll(t, f, got.deliver)
	equal(t, "lines", got.take(), []string{"a", "b"})
	if st := f.Stats(); !st.Ready || st.Reason != "" {
		t.Fatalf("with the file open: %+v", st)
	}
}

func TestRenameThenCreateWithTheNameMissingInBetween(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	writeFile(t, path, "")
	var got lines
	f := New(path, Options{LineTime: lineTime})
	defer f.Close()
	mustPoll(t, f, got.deliver)

	writeFile(t, path, "1\n2\n")
	if err := os.Rename(path, path+".2025-10-16-15"); err != nil {
		t.Fatal(err)
	}
	mustPoll(t, f, got.deliver) // ENOENT: keep the old file
	equal(t, "from the renamed file", got.take(), []string{"1", "2"})
	mustPoll(t, f, got.deliver)
	writeFile(t, path, "3\n")
	mustPoll(t, f, got.deliver)
	equal(t, "from the new file", got.take(), []string{"3"})
	if st := f.Stats(); st.Rotations != 1 || st.Truncations != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDeleteThenCreateIsFollowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "")
	var got lines
	f := New(path, Options{LineTime: lineTime})
	defer f.Close()
	mustPoll(t, f, got.deliver)
	writeFile(t, path, "1\n")
	os.Remove(path)
	writeFile(t, path, "2\n")
	mustPoll(t, f, got.deliver)
	equal(t, "lines", got.take(), []string{"1", "2"})
}

func TestTruncateThenRegrowPastTheOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	var w strings.Builder
	for i := range 100 {
		w.WriteString(kafkaLine(i))
	}
	writeFile(t, path, w.String())
	seq := &sequence{t: t, exact: true}
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()
	mustPoll(t, f, seq.deliver)

	// Truncated and refilled with more than was there before we look:
	// the size never appears smaller than our offset.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	for i := 100; i < 300; i++ {
		w.WriteString(kafkaLine(i))
	}
	writeFile(t, path, w.String())
	mustPoll(t, f, seq.deliver)
	if seq.next != 300 {
		t.Fatalf("last line %d, want 299", seq.next-1)
	}
	if st := f.Stats(); st.Truncations != 1 {
		t.Fatalf("Truncations = %d, want 1", st.Truncations)
	}
}

func TestTruncationDropsAHeldPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "complete\nhalf a li")
	var got lines
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()
	mustPoll(t, f, got.deliver)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "x\n")
	mustPoll(t, f, got.deliver)
	equal(t, "lines", got.take(), []string{"complete", "x"})
	if st := f.Stats(); st.Truncations != 1 || st.DroppedPartials != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOverlongLinesAreCutAndCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "")
	var got lines
	f := New(path, Options{LineTime: lineTime, MaxLineBytes: 10})
	defer f.Close()
	mustPoll(t, f, got.deliver)
	writeFile(t, path, "0123456789\n"+strings.Repeat("x", 25)+"\nok\n0123456")
	mustPoll(t, f, got.deliver)
	writeFile(t, path, "789abcdef") // the held line grows past the limit without a newline
	mustPoll(t, f, got.deliver)
	writeFile(t, path, strings.Repeat("y", 1<<20)+"\nafter\n")
	mustPoll(t, f, got.deliver)
	equal(t, "lines", got.take(), []string{"0123456789", "xxxxxxxxxx", "ok", "0123456789", "after"})
	if st := f.Stats(); st.CutLines != 2 || st.Lines != 5 {
		t.Fatalf("stats %+v", st)
	}
	if n := cap(f.lines.pending); n > 64 {
		t.Fatalf("held buffer grew to %d bytes with a 10-byte limit", n)
	}
}

func TestBinaryJunkDoesNotPanic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	junk := []byte{0, 0xff, '\r', '\n', '\n', 0x80, 0, '\r', '\r', '\n', 0xc3}
	writeFile(t, path, string(bytes.Repeat(junk, 1000)))
	var got lines
	f := New(path, Options{LineTime: lineTime, FromBeginning: true, MaxLineBytes: 3})
	defer f.Close()
	mustPoll(t, f, got.deliver)
	if len(got) != 3000 { // three '\n' per junk block; the trailing 0xc3 is held
		t.Fatalf("%d lines", len(got))
	}
}

func TestPollAfterCloseFails(t *testing.T) {
	f := New(filepath.Join(t.TempDir(), "x.log"), Options{LineTime: lineTime})
	f.Close()
	if err := f.Poll(func([]byte) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Poll after Close = %v", err)
	}
}

// TestDescriptorsStayFlatOverManyRotations checks that rotated files are
// closed: /proc/self/fd must not grow with the number of rotations.
func TestDescriptorsStayFlatOverManyRotations(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, 3)
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	seq := &sequence{t: t, exact: true}
	mustPoll(t, f, seq.deliver)
	base := openFDs()
	peak := 0
	for i := range 500 {
		w.write(10)
		w.rotate()
		if i%3 == 0 { // sometimes several rotations between polls
			mustPoll(t, f, seq.deliver)
			peak = max(peak, openFDs())
		}
	}
	w.write(1)
	mustPoll(t, f, seq.deliver)
	if peak > base { // base has the writer's and the follower's descriptor
		t.Fatalf("descriptors: %d at start, peak %d while following", base, peak)
	}
	w.close()
	f.Close()
	if n := openFDs(); n > base-2 {
		t.Fatalf("descriptors: %d at start, %d after closing writer and follower", base, n)
	}
	if seq.seen != w.next {
		t.Fatalf("delivered %d of %d", seq.seen, w.next)
	}
}

func TestNaturalOrder(t *testing.T) {
	names := []string{"server.log.10", "server.log.9", "server.log.2025-10-16-09", "server.log.2025-10-16-10", "server.log.1"}
	sorted := append([]string(nil), names...)
	slicesSort(sorted)
	equal(t, "order", sorted, []string{"server.log.1", "server.log.9", "server.log.10", "server.log.2025-10-16-09", "server.log.2025-10-16-10"})
}

// A live file cut shorter, but not to nothing, keeps its beginning: reading
// goes on at its new end, and nothing already delivered is delivered again.
func TestPartialTruncationDoesNotReadAgain(t *testing.T) {
	for _, cut := range []int64{1, 3000} {
		path := filepath.Join(t.TempDir(), "server.log")
		var w strings.Builder
		for i := range 100 {
			w.WriteString(kafkaLine(i))
		}
		writeFile(t, path, w.String())
		seq := &sequence{t: t, exact: true}
		f := New(path, Options{LineTime: lineTime, FromBeginning: true})
		mustPoll(t, f, seq.deliver)
		if err := os.Truncate(path, int64(w.Len())-cut); err != nil {
			t.Fatal(err)
		}
		mustPoll(t, f, seq.deliver)
		// What is appended after the cut continues the stream; with a
		// one-byte cut the newline of line 99 is gone, so line 100 needs one.
		writeFile(t, path, "\n"+kafkaLine(100))
		var got lines
		mustPoll(t, f, got.deliver)
		st := f.Stats()
		if st.Truncations != 0 || st.PartialTruncations != 1 {
			t.Errorf("cut %d: want one partial truncation and no restart, got %+v", cut, st)
		}
		if seq.next != 100 || len(got) == 0 || got[len(got)-1] != strings.TrimSuffix(kafkaLine(100), "\n") {
			t.Errorf("cut %d: want lines 0-99 once, then line 100; got up to %d, then %q", cut, seq.next-1, got)
		}
		f.Close()
	}
}
