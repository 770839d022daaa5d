package tail

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"path/filepath"
)

// pollToEnd is Poll for a ToEnd read: every file in turn, each to its end,
// then io.EOF. The files are opened at the first call, so that a name
// that cannot be opened is refused before anything is delivered.
func (f *Follower) pollToEnd(deliver func([]byte)) error {
	if !f.started {
		f.started = true
		for _, name := range append(append([]string(nil), f.opts.Before...), f.path) {
			q, err := openToEnd(name)
			if err != nil {
				f.Close()
				return err
			}
			f.backlog = append(f.backlog, q)
		}
	}
	for {
		if f.cur == nil {
			if len(f.backlog) == 0 {
				return io.EOF
			}
			f.advance()
			if f.opts.OnFile != nil {
				f.opts.OnFile(f.curName)
			}
		}
		if err := f.drain(deliver); err != nil {
			return err
		}
		if f.budget <= 0 {
			return errBudget
		}
		if fi, err := f.cur.Stat(); err == nil && f.curData == io.Reader(f.cur) && fi.Size() < f.curInfo.Size() {
			return fmt.Errorf("%s shrank while it was read (truncated by copytruncate?); verify a copy of it", f.curName)
		}
		f.flush(deliver)
		f.closeCur()
	}
}

// openToEnd opens a regular file to be read to its end; gzip is recognized
// by its magic bytes.
func openToEnd(name string) (queued, error) {
	fh, fi, err := openRegular(name)
	if err != nil {
		return queued{}, err
	}
	q := queued{f: fh, info: fi, name: name}
	var magic [2]byte
	if n, _ := fh.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{0x1f, 0x8b} {
		zr, err := gzip.NewReader(bufio.NewReaderSize(fh, readBufferSize))
		if err != nil {
			fh.Close()
			return queued{}, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		q.data = zr
	}
	return q, nil
}

// OpenContent opens a log file's content, decompressed when it is gzip: what
// a ToEnd read delivers of it.
func OpenContent(name string) (io.ReadCloser, error) {
	q, err := openToEnd(name)
	if err != nil {
		return nil, err
	}
	if q.data == nil {
		return q.f, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{q.data, q.f}, nil
}
