package tail

import "os"

// fileRef is one file as the follower read it: its identity and its first
// bytes. A truncation or a new file starts a new fileRef, so a Mark taken
// before keeps naming the file (and head) it was taken in.
type fileRef struct {
	dev, ino uint64
	head     []byte // the file's first bytes as read, up to headSize
}

func newFileRef(fi os.FileInfo) *fileRef {
	r := &fileRef{head: make([]byte, 0, headSize)}
	if fi != nil {
		r.dev, r.ino = fileID(fi)
	}
	return r
}

func (r *fileRef) position(path string, off int64) Position {
	return Position{Path: path, Dev: r.dev, Inode: r.ino, Offset: off, HeadLen: len(r.head), HeadHash: headHash(r.head)}
}

// A Mark is a point in the followed file, taken during a deliver call: the
// end of the line being delivered. A caller that acts on lines later than it
// reads them (merging several files) saves the Position of the Mark of the
// last line it acted on, so that a restart resumes exactly after it.
type Mark struct {
	ref *fileRef
	off int64
}

// Mark returns the end of the line being delivered; called outside a deliver
// call, the end of the last line delivered.
func (f *Follower) Mark() Mark { return Mark{f.ref, f.lines.end} }

// PositionOf turns a Mark into the Position a restart resumes from; false
// for the zero Mark (no line read yet).
func (f *Follower) PositionOf(m Mark) (Position, bool) {
	if m.ref == nil {
		return Position{}, false
	}
	return m.ref.position(f.path, m.off), true
}

// Behind returns how many bytes are left to read now: the rest of the current
// file and every queued file. It stats them: call it once per read, not per line.
func (f *Follower) Behind() int64 {
	var n int64
	if f.cur != nil {
		if fi, err := f.cur.Stat(); err == nil {
			n += max(0, fi.Size()-f.offset)
		}
	}
	for _, q := range f.backlog {
		if fi, err := q.f.Stat(); err == nil {
			n += max(0, fi.Size()-q.from)
		}
	}
	return n
}
