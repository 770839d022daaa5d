package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// maxLineBytes bounds the memory one physical line may take. The rest of a longer
// line is skipped and the line is reported as cut, so a 50 MB junk line costs
// 1 MiB, not 50 MB.
const maxLineBytes = 1 << 20

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
		tail.SortRolled(g.rolled, readRolled)
		out = append(out, append(g.rolled, g.live...))
	}
	return out
}

// readRolled gives the follower's ordering of rolled files their content,
// decompressed, to compare the timestamps of their first lines.
func readRolled(path string) (io.ReadCloser, error) { return openInput(path, nil) }

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

// openInput opens a log file for reading (a regular file only, see
// checkInputs); gzip is recognized by its magic bytes.
func openInput(path string, stdin io.Reader) (io.ReadCloser, error) {
	var rc io.ReadCloser
	if path == "-" {
		rc = io.NopCloser(stdin)
	} else {
		f, _, err := tail.OpenRegular(path)
		if err != nil {
			return nil, err
		}
		rc = f
	}
	br := bufio.NewReaderSize(rc, 256<<10)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		return readCloser{zr, rc}, nil
	}
	return readCloser{br, rc}, nil
}

// openMapped maps path when it is a plain (not gzip) regular file. ok=false
// means "use openInput".
func openMapped(path string) (lr *lineReader, closer io.Closer, ok bool) {
	if path == "-" {
		return nil, nil, false
	}
	f, fi, err := tail.OpenRegular(path)
	if err != nil {
		return nil, nil, false
	}
	data, unmap, ok := mapFile(f, fi.Size())
	if !ok || len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		if ok {
			unmap()
		}
		f.Close()
		return nil, nil, false
	}
	return newMappedLineReader(data), closerFunc(func() error { unmap(); return f.Close() }), true
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

type readCloser struct {
	io.Reader
	io.Closer
}

// lineReader yields physical lines without their newline, bounded to maxLineBytes.
type lineReader struct {
	br      *bufio.Reader
	scratch []byte // holds a cut line while the rest of it is skipped
	cut     int64  // lines longer than maxLineBytes, cut to that size

	mapped []byte // the whole file when it is memory-mapped (br is then nil)
	off    int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, maxLineBytes)}
}

// newMappedLineReader reads lines out of a mapped file.
func newMappedLineReader(data []byte) *lineReader {
	return &lineReader{mapped: data}
}

// next returns the next line; the slice is valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	if lr.br == nil {
		return lr.nextMapped()
	}
	line, err := lr.br.ReadSlice('\n')
	switch {
	case err == nil:
		return line[:len(line)-1], nil
	case errors.Is(err, bufio.ErrBufferFull):
		// Keep the first maxLineBytes, drop the rest of the line. ReadSlice's
		// result is overwritten by the next read, hence the copy.
		lr.cut++
		lr.scratch = append(lr.scratch[:0], line...)
		for {
			_, err2 := lr.br.ReadSlice('\n')
			if err2 == nil || !errors.Is(err2, bufio.ErrBufferFull) {
				break
			}
		}
		return lr.scratch, nil
	case err == io.EOF && len(line) > 0:
		return line, nil // last line without a newline
	default:
		return nil, err
	}
}

// nextMapped is next for a mapped file: the same lines, the same cuts.
func (lr *lineReader) nextMapped() ([]byte, error) {
	rest := lr.mapped[lr.off:]
	if len(rest) == 0 {
		return nil, io.EOF
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		lr.off = len(lr.mapped)
		if len(rest) >= maxLineBytes {
			lr.cut++
			return rest[:maxLineBytes], nil
		}
		return rest, nil // last line without a newline
	}
	lr.off += i + 1
	if i >= maxLineBytes { // what bufio.ReadSlice reports as ErrBufferFull
		lr.cut++
		return rest[:maxLineBytes], nil
	}
	return rest[:i], nil
}
