package tail

import (
	"bytes"
	"io"
)

// checkTruncation detects copytruncate on the live file before reading it.
// A file smaller than our offset was truncated. A file that was truncated and
// then regrew past our offset before we looked cannot be told by its size:
// its first bytes (or the byte before our offset) differ from what we read,
// unless the new content repeats the old byte for byte, which Kafka's
// millisecond timestamps make practically impossible. Lines appended after
// our last read and before the truncation are lost: they are only in the
// copy.
func (f *Follower) checkTruncation() error {
	fi, err := f.cur.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Size() < f.offset:
		f.truncated("file shrank below the read offset")
	case f.offset > 0 && f.headChanged():
		f.truncated("file beginning changed")
	case f.offset > 0 && f.byteBeforeOffset() != f.lastByte:
		f.truncated("byte before the read offset changed")
	}
	return nil
}

// headChanged reports whether the file no longer starts with the bytes we
// read from it.
func (f *Follower) headChanged() bool {
	n := len(f.head)
	if n == 0 {
		return false
	}
	got := f.readAt(f.scratch[:n], 0)
	return got < n || !bytes.Equal(f.scratch[:n], f.head)
}

func (f *Follower) byteBeforeOffset() byte {
	b := f.scratch[:1]
	if f.readAt(b, f.offset-1) != 1 {
		return 0 // shorter than our offset: also a change
	}
	return b[0]
}

// truncated restarts at the beginning of the current file. A held partial
// line is dropped: its end was cut away.
func (f *Follower) truncated(why string) {
	if _, err := f.cur.Seek(0, io.SeekStart); err != nil {
		f.log.Warn("cannot seek after truncation", "err", err)
	}
	if f.lines.drop() {
		f.stats.dropped.Add(1)
	}
	f.log.Info("log file truncated, reading from the beginning", "reason", why, "offset", f.offset)
	f.offset, f.head, f.lastByte = 0, f.head[:0], 0
	f.stats.truncations.Add(1)
	f.commit()
}
