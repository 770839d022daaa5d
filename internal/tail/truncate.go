package tail

import (
	"bytes"
	"io"
)

// checkTruncation detects copytruncate on the live file before reading it.
// A file smaller than our offset was truncated: to nothing (copytruncate),
// or only partly, when what is left is a prefix of what we read, which is
// then not read again. A file that was truncated and
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
	case fi.Size() < f.offset && fi.Size() > 0 && f.prefixKept(fi.Size()):
		f.shrank(fi.Size())
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
	head := f.ref.head
	n := len(head)
	if n == 0 {
		return false
	}
	got := f.readAt(f.scratch[:n], 0)
	return got < n || !bytes.Equal(f.scratch[:n], head)
}

// prefixKept reports whether a file now size bytes long (less than our
// offset) still starts with the bytes we read: it lost its end, not its
// beginning.
func (f *Follower) prefixKept(size int64) bool {
	head := f.ref.head[:min(int64(len(f.ref.head)), size)]
	got := f.readAt(f.scratch[:len(head)], 0)
	return got == len(head) && bytes.Equal(f.scratch[:len(head)], head)
}

// shrank continues at the new end of a file cut to size bytes whose
// beginning is unchanged: every line before size was delivered already, and
// a held partial line lost its end.
func (f *Follower) shrank(size int64) {
	if _, err := f.cur.Seek(size, io.SeekStart); err != nil {
		f.truncated("cannot seek to the new end: " + err.Error())
		return
	}
	if f.lines.drop() {
		f.stats.dropped.Add(1)
	}
	f.log.Warn("log file shrank but kept its beginning: continuing at its new end, lines after it were lost", "offset", f.offset, "size", size)
	head := f.ref.head[:min(int64(len(f.ref.head)), size)]
	f.ref = &fileRef{dev: f.ref.dev, ino: f.ref.ino, head: append(make([]byte, 0, headSize), head...)}
	f.offset, f.lastByte = size, 0
	var b [1]byte
	if f.readAt(b[:], size-1) == 1 {
		f.lastByte = b[0]
	}
	f.lines.end = size
	f.stats.partialTruncations.Add(1)
	f.commit()
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
	f.offset, f.ref, f.lastByte = 0, newFileRef(f.curInfo), 0
	f.lines.end = 0
	f.stats.truncations.Add(1)
	f.commit()
}
