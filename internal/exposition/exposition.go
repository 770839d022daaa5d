package exposition

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The text format 0.0.4, as expfmt writes it: a family's HELP and TYPE
// lines, samples appended straight into a byte buffer, label values escaped.
// The writer (write.go) renders tables with it.

// textFamily is the rendered header of one family: its HELP and TYPE lines.
type textFamily struct {
	name   string
	header []byte
}

func newTextFamily(name, help string, counter bool) *textFamily {
	typ := " gauge\n"
	if counter {
		typ = " counter\n"
	}
	h := make([]byte, 0, 2*len(name)+len(help)+32)
	h = append(h, "# HELP "...)
	h = append(h, name...)
	h = append(h, ' ')
	h = appendEscaped(h, help, false)
	h = append(h, "\n# TYPE "...)
	h = append(h, name...)
	h = append(h, typ...)
	return &textFamily{name: name, header: h}
}

// flushAt is how much a textWriter buffers before it writes to its output.
const flushAt = 64 << 10

// textWriter appends the exposition to buf and passes it on to out every
// flushAt bytes. It also implements the writer interface expfmt looks for
// (WriteString, WriteByte, WriteRune), so the registry's families are encoded
// into the same buffer without a bufio.Writer.
type textWriter struct {
	buf []byte
	out io.Writer
	err error // the first error of out; later output is dropped

	famStart int // where the family being written starts in buf
	samples  int // samples written in the family being written
}

func (w *textWriter) flush() {
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.out.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *textWriter) maybeFlush() {
	if len(w.buf) >= flushAt {
		w.flush()
	}
}

// begin starts a family. Its header stays only if a sample follows: the
// registry leaves out a family without metrics.
func (w *textWriter) begin(f *textFamily) {
	w.famStart, w.samples = len(w.buf), 0
	w.buf = append(w.buf, f.header...)
}

// end closes a family, dropping the header of an empty one (nothing was
// flushed since begin then: only a sample flushes).
func (w *textWriter) end() {
	if w.samples == 0 {
		w.buf = w.buf[:w.famStart]
	}
}

// sampleStart appends the series name and its rendered label block
// ({name="value",…}, or empty) and the space before the value.
func (w *textWriter) sampleStart(f *textFamily, labels []byte) {
	w.buf = append(w.buf, f.name...)
	w.buf = append(w.buf, labels...)
	w.buf = append(w.buf, ' ')
}

func (w *textWriter) sampleEnd() {
	w.buf = append(w.buf, '\n')
	w.samples++
	w.maybeFlush()
}

func (w *textWriter) sampleFloat(f *textFamily, labels []byte, v float64) {
	w.sampleStart(f, labels)
	w.buf = appendFloat(w.buf, v)
	w.sampleEnd()
}

// The writer methods expfmt.MetricFamilyToText uses.

func (w *textWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *textWriter) WriteString(s string) (int, error) {
	w.buf = append(w.buf, s...)
	return len(s), nil
}

func (w *textWriter) WriteByte(c byte) error {
	w.buf = append(w.buf, c)
	return nil
}

func (w *textWriter) WriteRune(r rune) (int, error) {
	n := len(w.buf)
	w.buf = utf8.AppendRune(w.buf, r)
	return len(w.buf) - n, nil
}

// smallInt bounds the integers whose shortest %g form is their plain decimal
// digits: strconv switches to an exponent from 1e6 on ("1e+06").
const smallInt = 1_000_000

// appendFloat formats a sample value as expfmt's writeFloat does; small
// integers, most of the values, skip the float formatting.
func appendFloat(b []byte, f float64) []byte {
	if f > -smallInt && f < smallInt && f == math.Trunc(f) && f != 0 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendEscaped escapes as expfmt does: backslash and newline, and with
// quote also the double quote (label values; HELP keeps its quotes).
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendLabel renders name="value". A value that is not valid UTF-8 (which
// client_golang would refuse) has its invalid bytes replaced by U+FFFD.
func appendLabel(b []byte, name, value string) []byte {
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendEscaped(b, value, true)
	return append(b, '"')
}

// labelBlocks holds one rendered label block per row, back to back.
type labelBlocks struct {
	b   []byte
	end []int
}

func (l *labelBlocks) reset() { l.b, l.end = l.b[:0], l.end[:0] }

// grow makes room for n more blocks of about size bytes each.
func (l *labelBlocks) grow(n, size int) {
	l.b = slices.Grow(l.b, n*size)
	l.end = slices.Grow(l.end, n)
}

// addPairs adds the block of names[i]=values[i].
func (l *labelBlocks) addPairs(names, values []string) {
	for i := range names {
		if i == 0 {
			l.b = append(l.b, '{')
		} else {
			l.b = append(l.b, ',')
		}
		l.b = appendLabel(l.b, names[i], values[i])
	}
	if len(names) > 0 {
		l.b = append(l.b, '}')
	}
	l.end = append(l.end, len(l.b))
}

func (l *labelBlocks) get(i int) []byte {
	start := 0
	if i > 0 {
		start = l.end[i-1]
	}
	return l.b[start:l.end[i]]
}
