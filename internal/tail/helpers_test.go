package tail

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

// appendKafkaLine appends line n of the test stream: a real Kafka 4.1
// "High watermark updated" DEBUG line whose offsets and timestamp derive
// from n, so every line is distinct and its number can be read back.
func appendKafkaLine(b []byte, n int) []byte {
	ms := n % 1000
	sec := n / 1000
	b = append(b, "[2025-10-16 "...)
	b = append2(b, (sec/3600)%24)
	b = append(b, ':')
	b = append2(b, (sec/60)%60)
	b = append(b, ':')
	b = append2(b, sec%60)
	b = append(b, ',')
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	b = append(b, "] DEBUG [Partition performance-test-0 broker=1] High watermark updated from (offset="...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ", segment=[16:"...)
	b = strconv.AppendInt(b, int64(n)*192, 10)
	b = append(b, "]) to (offset="...)
	b = strconv.AppendInt(b, int64(n)+1, 10)
	b = append(b, ", segment=[16:"...)
	b = strconv.AppendInt(b, int64(n+1)*192, 10)
	b = append(b, "]) (kafka.cluster.Partition)\n"...)
	return b
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func kafkaLine(n int) string { return string(appendKafkaLine(nil, n)) }

// lineNumber reads back the n of a line made by appendKafkaLine.
func lineNumber(line []byte) (int, bool) {
	const key = "from (offset="
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, ',')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(rest[:j]))
	return n, err == nil
}

// sequence checks delivered lines against the stream: every line must be
// intact (byte-equal to the line it claims to be) and numbers must strictly
// increase. With exact set, no number may be skipped either.
type sequence struct {
	t       testing.TB
	prefix  string // written before every line (see logWriter.prefix)
	exact   bool
	next    int   // the number expected next when exact, else last+1
	seen    int   // lines delivered
	skipped []int // numbers never delivered (only when !exact)
	want    []byte
}

func (s *sequence) deliver(line []byte) {
	s.t.Helper()
	line, ok := bytes.CutPrefix(line, []byte(s.prefix))
	if !ok {
		s.t.Fatalf("line %d lacks the prefix %q: %q", s.seen, s.prefix, line)
	}
	n, ok := lineNumber(line)
	if !ok {
		s.t.Fatalf("garbled line %d: %q", s.seen, line)
	}
	s.want = appendKafkaLine(s.want[:0], n)
	if !bytes.Equal(line, s.want[:len(s.want)-1]) {
		s.t.Fatalf("line %d is not intact:\n got %q\nwant %q", n, line, s.want)
	}
	switch {
	case n < s.next:
		s.t.Fatalf("line %d delivered again or out of order (expected %d)", n, s.next)
	case n > s.next && s.exact:
		s.t.Fatalf("lines %d..%d lost", s.next, n-1)
	}
	for k := s.next; k < n; k++ {
		s.skipped = append(s.skipped, k)
	}
	s.next = n + 1
	s.seen++
}

// logWriter writes the test stream into a file and rotates it the ways
// log4j, kubelet and logrotate do.
type logWriter struct {
	t      testing.TB
	path   string
	f      *os.File
	next   int // number of the next line to write
	rng    *rand.Rand
	buf    []byte
	rolled []string // rolled file names, oldest first
	keep   int      // rolled files kept; older ones are deleted
	serial int
	// prefix is written before every line; a prefix hides the line's
	// timestamp from the rolled-file ordering.
	prefix string
}

func newLogWriter(t testing.TB, path string, seed uint64) *logWriter {
	w := &logWriter{t: t, path: path, rng: rand.New(rand.NewPCG(seed, 1)), keep: 8}
	w.create()
	return w
}

func (w *logWriter) create() {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	w.f = f
}

// write appends n lines, sometimes in two write() calls split at a random
// byte, so that a line can be cut in half between two reads.
func (w *logWriter) write(n int) {
	w.buf = w.buf[:0]
	for range n {
		w.buf = append(w.buf, w.prefix...)
		w.buf = appendKafkaLine(w.buf, w.next)
		w.next++
	}
	cut := len(w.buf)
	if w.rng.IntN(3) == 0 {
		cut = w.rng.IntN(len(w.buf) + 1)
	}
	w.writeRaw(w.buf[:cut])
	w.writeRaw(w.buf[cut:])
}

// writeHalf appends the first half of line n and returns the second half,
// for a caller that wants to poll in between.
func (w *logWriter) writeHalf() (rest []byte) {
	line := appendKafkaLine([]byte(w.prefix), w.next)
	w.next++
	half := len(line) / 2
	w.writeRaw(line[:half])
	return line[half:]
}

func (w *logWriter) writeRaw(b []byte) {
	if len(b) == 0 {
		return
	}
	if _, err := w.f.Write(b); err != nil {
		w.t.Fatal(err)
	}
}

// renameAway is the first half of a log4j rotation: close and rename. Until
// create is called the path does not exist (the ENOENT window).
func (w *logWriter) renameAway() {
	if err := w.f.Close(); err != nil {
		w.t.Fatal(err)
	}
	name := fmt.Sprintf("%s.2025-10-16-%06d", w.path, w.serial)
	w.serial++
	if err := os.Rename(w.path, name); err != nil {
		w.t.Fatal(err)
	}
	w.rolled = append(w.rolled, name)
	for len(w.rolled) > w.keep {
		os.Remove(w.rolled[0])
		w.rolled = w.rolled[1:]
	}
}

// rotate is a whole rename+create rotation.
func (w *logWriter) rotate() {
	w.renameAway()
	w.create()
}

// copyTruncate is logrotate's copytruncate as the follower sees it: the
// file is truncated in place while the writer keeps its O_APPEND descriptor.
// (The copy itself is never read by the follower, so it is not made.)
func (w *logWriter) copyTruncate() {
	if err := os.Truncate(w.path, 0); err != nil {
		w.t.Fatal(err)
	}
}

func (w *logWriter) close() { w.f.Close() }

func mustPoll(t testing.TB, f *Follower, deliver func([]byte)) {
	t.Helper()
	if err := f.Poll(deliver); err != nil {
		t.Fatalf("Poll: %v", err)
	}
}

func slicesSort(s []string) { slices.SortFunc(s, naturalCompare) }
