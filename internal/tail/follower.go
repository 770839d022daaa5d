package tail

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"
)

// Defaults for Options fields left zero.
const (
	// DefaultPollInterval is how often a caller is expected to call Poll.
	DefaultPollInterval = 250 * time.Millisecond
	DefaultMaxLineBytes = 1 << 20
	readBufferSize      = 128 << 10
	// missingGrace is how long the path may stay missing while the file
	// read is open before it counts as deleted: log4j, logrotate's create
	// and kubelet create the new file within milliseconds of the rename,
	// and 2 s (eight poll intervals) still shows a deletion within a
	// scrape interval.
	missingGrace = 2 * time.Second
	// headSize is how much of a file's beginning is remembered to recognize
	// it: a Kafka line is ~100-250 bytes and starts with a millisecond
	// timestamp, so a regrown file almost never repeats the first 256 bytes.
	headSize = 256
)

// ErrClosed is returned by Poll after Close.
var ErrClosed = errors.New("tail: follower closed")

// Options configure a Follower. The zero value follows from the end of the
// file and cuts lines at 1 MiB.
type Options struct {
	// FromBeginning starts at offset 0 instead of the end of the file.
	FromBeginning bool
	// Start resumes from a saved position; it wins over FromBeginning.
	Start *Position
	// MaxLineBytes bounds a line; longer lines are delivered cut to this
	// length and counted in Stats.CutLines.
	MaxLineBytes int
	// Logger receives rotations, truncations and errors. Nil discards.
	Logger *slog.Logger
	// ToEnd reads the files once, Before first, then the path, each from
	// its beginning to its end, and stops: Read returns io.EOF at the end,
	// as at a pipe's. This is how the offline commands read: nothing is
	// followed across a rotation, gzip files are decompressed, and a file
	// that shrinks while it is read is an error.
	ToEnd bool
	// Before are the files a ToEnd read reads before the path, in order:
	// its rotated copies, oldest first.
	Before []string
	// OnFile, with ToEnd, is called as each file is opened, before its
	// first line is delivered, with its name.
	OnFile func(name string)
	// LineTime reads the timestamp at the start of a log line: the first
	// line's time orders rolled copies whose mtimes are alike. Nil orders
	// them by mtime and name alone.
	LineTime LineTime
}

// LineTime returns the timestamp a log line starts with, ok false if none.
type LineTime func(line []byte) (t time.Time, ok bool)

// A Follower reads one file by name, like `tail -F`: it follows the name
// across rename and copytruncate rotations and delivers every complete line
// once. The caller calls Poll, from one goroutine at a time, every
// DefaultPollInterval or so; Position and Stats may be called from any
// goroutine.
type Follower struct {
	path string
	opts Options
	log  *slog.Logger

	// Set when following a pipe: no seeking, no rotation.
	pipe      io.Reader
	pipeIn    *pipeReader // started by the first Poll
	pipeSpare []byte

	// The file being read and the files queued to be read after it: rolled
	// files found at resume or rotation, then the live file. Only the live
	// file (the one that was at path when opened) is checked for rotation.
	cur     *os.File
	curInfo os.FileInfo
	curLive bool
	curName string    // the file's name (the path, or a rolled or Before file's)
	curData io.Reader // what is read: cur, or its decompressor
	backlog []queued

	offset   int64    // bytes of cur consumed
	ref      *fileRef // cur's identity and first bytes as read
	lastByte byte     // the byte at offset-1 as read
	lines    lineSplitter
	buf      []byte
	scratch  []byte

	started     bool // the start position has been chosen
	startedOver bool // the Start position could not be resumed: reading began at 0
	closed      bool
	// missingSince is when the path was first found missing while the
	// current file is open (zero while it is there).
	missingSince time.Time
	lastWrite    time.Time // the live file's mtime when a read last reached its end
	budget       int       // bytes the current Read may still read
	resumed      bool      // the last Read stopped at its budget: the next goes on with the same pass

	// hook, when set by tests, runs at points inside Poll where a real
	// writer could act concurrently; it lets a test rotate "mid-poll".
	hook func(hookPoint)

	posMu sync.Mutex
	pos   Position // end of the last delivered line
	stats counters
}

type queued struct {
	f    *os.File
	info os.FileInfo
	from int64
	live bool
	name string    // "" for the path
	data io.Reader // nil: f itself
}

type hookPoint int

const (
	afterRead  hookPoint = iota // after each read syscall that returned data
	beforeStat                  // after reaching EOF, before stat(path)
)

// New returns a follower for path; "-" means standard input. It opens
// nothing yet: the first Poll does, so a file that does not exist yet is
// simply waited for.
func New(path string, opts Options) *Follower {
	if path == "-" {
		return NewPipe("-", os.Stdin, opts)
	}
	return newFollower(path, opts)
}

// NewPipe returns a follower reading r to its end, e.g. `kubectl logs -f`
// piped into the exporter. name only labels positions and logs.
func NewPipe(name string, r io.Reader, opts Options) *Follower {
	f := newFollower(name, opts)
	f.pipe = r
	f.stats.ready.Store(true)
	return f
}

func newFollower(path string, opts Options) *Follower {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Follower{
		path:    path,
		opts:    opts,
		log:     log.With("file", path),
		lines:   lineSplitter{max: opts.MaxLineBytes},
		buf:     make([]byte, readBufferSize),
		scratch: make([]byte, headSize),
		ref:     &fileRef{},
		pos:     Position{Path: path},
	}
}

// Position returns where a restart should resume: the end of the last line
// whose deliver call has returned.
func (f *Follower) Position() Position {
	f.posMu.Lock()
	defer f.posMu.Unlock()
	return f.pos
}

// LastWrite is the modification time the followed file had when a read last
// reached its end (zero before that, and for a pipe). Call it from Read's
// goroutine.
func (f *Follower) LastWrite() time.Time { return f.lastWrite }

// Stats returns a snapshot of the follower's counters.
func (f *Follower) Stats() Stats { return f.stats.snapshot() }

// Close releases the open files. Poll returns ErrClosed afterwards.
func (f *Follower) Close() error {
	f.closed = true
	f.closeCur()
	for _, q := range f.backlog {
		q.f.Close()
	}
	f.backlog = nil
	if f.pipeIn != nil {
		f.pipeIn.close()
	}
	if f.pipe == nil {
		f.stats.ready.Store(false)
	}
	return nil
}

// Poll does one synchronous pass: it reads everything available, delivers
// the complete lines, then checks the path for rotation and the file for
// truncation, following either before returning. It returns nil when there
// is nothing more to read for now; errors (a stat that fails, a permission
// problem) are worth retrying, never fatal; the follower logs them once
// per change and shows them in Stats. On a pipe, Poll delivers what has
// arrived without waiting for more, and returns io.EOF at its end.
//
// The line passed to deliver is only valid during the call.
func (f *Follower) Poll(deliver func(line []byte)) error {
	_, err := f.Read(deliver, 0)
	return err
}

// Read is Poll that stops once it has read budget bytes (0: no bound), so
// that a caller merging several files holds at most about a budget of each
// in memory. more reports that it stopped at the budget: there is more to
// read now, and the next call goes on with the same pass, as Poll reads its
// chunks: the rotation check at the pass's end waits for it, and the
// truncation check before a pass is not repeated (each chunk read is still
// checked against the file's head).
func (f *Follower) Read(deliver func(line []byte), budget int) (more bool, err error) {
	if f.closed {
		return false, ErrClosed
	}
	f.budget = budget
	if budget <= 0 {
		f.budget = math.MaxInt
	}
	switch {
	case f.pipe != nil:
		err = f.pollPipe(deliver)
	case f.opts.ToEnd:
		err = f.pollToEnd(deliver)
	default:
		err = f.pollFile(deliver)
	}
	if errors.Is(err, errBudget) {
		return true, nil
	}
	f.stats.setReason(reasonFor(err), err, f.log)
	return false, err
}

// errBudget stops a Read at its budget; it never leaves the package.
var errBudget = errors.New("tail: read budget spent")

// pollFile is Poll for a file followed by name.
func (f *Follower) pollFile(deliver func([]byte)) error {
	// A Read that goes on where the last one stopped at its budget reads on
	// as Poll reads its chunks: the truncation check comes before a pass,
	// not before every budget of it (three system calls per read).
	resumed := f.resumed
	f.resumed = false
	for {
		if f.cur == nil && len(f.backlog) == 0 {
			if err := f.openLive(); err != nil {
				return err
			}
		}
		if f.cur == nil {
			f.advance()
		}
		if f.curLive && !resumed {
			if err := f.checkTruncation(); err != nil {
				return err
			}
		}
		resumed = false
		if err := f.drain(deliver); err != nil {
			return err
		}
		if f.budget <= 0 {
			f.resumed = true
			return errBudget
		}
		if !f.curLive {
			// A rolled file is final: whatever is left is its last line.
			f.flush(deliver)
			f.closeCur()
			continue
		}
		if f.hook != nil {
			f.hook(beforeStat)
		}
		fi, err := os.Stat(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			// Renamed away and not recreated yet: keep reading the old
			// file until the new one appears, for a while.
			if f.missingSince.IsZero() {
				f.missingSince = time.Now()
			}
			if time.Since(f.missingSince) < missingGrace {
				return nil
			}
			return f.gone(deliver, err)
		}
		f.missingSince = time.Time{}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			// Keep reading the old file, as in the ENOENT window, until
			// a regular file is back at the path.
			return &notRegularError{f.path, fi.Mode()}
		}
		if os.SameFile(fi, f.curInfo) {
			f.lastWrite = fi.ModTime()
			return nil
		}
		// Lines appended between our EOF and the rename are still in the
		// old file: read them before letting it go.
		if err := f.drain(deliver); err != nil {
			return err
		}
		if f.budget <= 0 {
			f.resumed = true
			return errBudget
		}
		if err := f.rotate(deliver); err != nil {
			return err
		}
	}
}

// gone gives up a live file whose name has been missing for missingGrace:
// deleted (or renamed for good), it will not get a successor to rotate to.
// What its writer appended since our last read is read, its last partial
// line delivered, and it is closed, so that the space of a deleted file is
// freed; missing is then the reason reported until a file is back at the
// path, which is read from its beginning.
func (f *Follower) gone(deliver func([]byte), missing error) error {
	if err := f.drain(deliver); err != nil {
		return err
	}
	if f.budget <= 0 {
		f.resumed = true
		return errBudget
	}
	f.flush(deliver)
	f.closeCur()
	f.missingSince = time.Time{}
	f.log.Info("log file still missing after "+missingGrace.String()+": read it to its end and closed it", "size", f.offset)
	return missing
}

// drain reads cur to EOF, or until the Read's budget is spent, delivering
// complete lines.
func (f *Follower) drain(deliver func([]byte)) error {
	for f.budget > 0 {
		n, err := f.curData.Read(f.buf[:min(len(f.buf), f.budget)])
		if n > 0 {
			chunk := f.buf[:n]
			// Read first, then check the head is unchanged: if the file
			// was truncated and regrown before our read, the check sees
			// the new head and the chunk (new content read at an old
			// offset) is thrown away instead of delivered. This ordering
			// is what makes copytruncate unable to cause duplicates.
			if f.curLive && f.headChanged() {
				f.truncated("head changed while reading")
				continue
			}
			f.lines.base = f.offset
			f.consumed(chunk)
			f.budget -= n
			f.delivered(f.lines.split(chunk, deliver))
			f.commit()
			if f.hook != nil {
				f.hook(afterRead)
			}
		}
		if err == io.EOF || (err == nil && n == 0) {
			return nil
		}
		if err != nil && f.opts.ToEnd {
			return fmt.Errorf("%s: %w", f.curName, err) // as verify has always said it
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", f.curName, err)
		}
	}
	return nil
}

// delivered updates the line counters once per chunk, not per line.
func (f *Follower) delivered(lines, cut uint64) {
	if lines == 0 {
		return
	}
	f.stats.lines.Add(lines)
	f.stats.cut.Add(cut)
	f.stats.lastRead.Store(time.Now().UnixNano())
}

// flush delivers the held partial line of a file that will not grow any
// more and publishes the position after it.
func (f *Follower) flush(deliver func([]byte)) {
	f.lines.base = f.offset - int64(f.lines.held())
	if f.lines.flush(deliver) {
		f.delivered(1, 0)
	}
	f.commit()
}

// consumed records that chunk was read at the current offset.
func (f *Follower) consumed(chunk []byte) {
	if r := f.ref; len(r.head) < headSize && f.offset == int64(len(r.head)) {
		r.head = append(r.head, chunk[:min(len(chunk), headSize-len(r.head))]...)
	}
	f.offset += int64(len(chunk))
	f.lastByte = chunk[len(chunk)-1]
	f.stats.bytes.Add(uint64(len(chunk)))
}

// commit publishes the position of the end of the last delivered line.
func (f *Follower) commit() {
	off := f.offset - int64(f.lines.held())
	p := f.ref.position(f.path, off)
	f.posMu.Lock()
	f.pos = p
	f.posMu.Unlock()
	f.stats.offset.Store(off)
	f.stats.inode.Store(p.Inode)
}

// rotate switches from the drained old file to the one now at path, first
// queueing any file rotated in between (several rotations between two
// polls), so that none is skipped.
func (f *Follower) rotate(deliver func([]byte)) error {
	nf, ni, err := openRegular(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone again; the next poll looks again
	}
	if err != nil {
		return err
	}
	old := f.curInfo
	var q []queued
	if _, newer, ok := rolledAfter(f.path, f.opts.LineTime, func(fi os.FileInfo) bool { return os.SameFile(fi, old) }); ok {
		q = f.openRolled(newer, ni)
	}
	f.flush(deliver)
	f.closeCur()
	f.backlog = q
	f.backlog = append(f.backlog, queued{f: nf, info: ni, live: true})
	f.stats.rotations.Add(1 + uint64(len(q)))
	f.log.Info("log file rotated", "skipped_over", len(q))
	return nil
}

// openRolled opens the given rolled files, skipping any that is the live
// file or that changed identity between stat and open.
func (f *Follower) openRolled(files []*rolledFile, live os.FileInfo) []queued {
	var q []queued
	for _, rf := range files {
		if live != nil && os.SameFile(rf.info, live) {
			continue
		}
		fh, fi, err := openRegular(rf.name)
		if err != nil {
			f.log.Warn("cannot open rolled file", "rolled", rf.name, "err", err)
			continue
		}
		if !os.SameFile(fi, rf.info) {
			fh.Close()
			continue
		}
		q = append(q, queued{f: fh, info: fi, name: rf.name})
	}
	return q
}

// advance makes the next queued file current.
func (f *Follower) advance() {
	q := f.backlog[0]
	f.backlog = f.backlog[1:]
	f.setCur(q.f, q.info, q.live, q.from)
	if q.name != "" {
		f.curName = q.name
	}
	if q.data != nil {
		f.curData = q.data
	}
}

func (f *Follower) setCur(fh *os.File, fi os.FileInfo, live bool, from int64) {
	f.cur, f.curInfo, f.curLive, f.curName, f.curData = fh, fi, live, f.path, fh
	f.offset, f.ref, f.lastByte = 0, newFileRef(fi), 0
	if from > 0 {
		if _, err := fh.Seek(from, io.SeekStart); err != nil {
			f.log.Warn("cannot seek, reading from the beginning", "offset", from, "err", err)
		} else {
			f.offset = from
			r := f.ref
			r.head = r.head[:f.readAt(r.head[:min(from, headSize)], 0)]
			var b [1]byte
			if f.readAt(b[:], from-1) == 1 {
				f.lastByte = b[0]
			}
		}
	}
	f.lines.end = f.offset
	f.stats.ready.Store(true)
	f.commit()
}

func (f *Follower) closeCur() {
	if f.cur != nil {
		f.cur.Close()
		f.cur = nil
	}
	f.stats.ready.Store(false)
}

// readAt reads into b at off and returns how many bytes it got.
func (f *Follower) readAt(b []byte, off int64) int {
	n, _ := f.cur.ReadAt(b, off)
	return n
}
