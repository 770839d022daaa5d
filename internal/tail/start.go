package tail

import (
	"errors"
	"io/fs"
	"os"
)

// openLive opens the file at path when nothing is open. The first time it
// applies the start option (end of file, beginning, or a saved Position);
// later it is a file that appeared after we waited for it, read from 0. A
// missing file, or something else than a file at the path, is waited for
// (and reported); a file we may not read is retried with the start option.
func (f *Follower) openLive() error {
	first := !f.started
	if first && f.opts.Start != nil {
		return f.resume(*f.opts.Start)
	}
	fh, fi, err := openRegular(f.path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
		f.started = true
		return err
	}
	if err != nil {
		return err
	}
	f.started = true
	var from int64
	if first && !f.opts.FromBeginning {
		from = fi.Size()
	}
	f.setCur(fh, fi, true, from)
	if from > 0 && f.lastByte != '\n' {
		// We start in the middle of a line being written; its beginning
		// is before our start, so the rest of it is not a line of ours.
		f.lines.skipping = true
	}
	return nil
}

// resume positions the follower at a saved Position. The saved file may
// still be the live one, have been replaced by a copy of itself (the same
// first bytes under another inode, or rewritten shorter in place), or have
// been rotated (once or several times) while we were down: then it is read
// from the saved offset, every file rolled after it in full, and the live
// file from 0, so that a restart neither loses nor repeats lines. When the
// saved file is gone, the live file is read from its beginning, the miss
// counted, and StartedOver reports it.
func (f *Follower) resume(p Position) error {
	live, liveInfo, err := openRegular(f.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f.started = true
	startOver := func(msg string, args ...any) error {
		f.stats.resumeMisses.Add(1)
		f.startedOver = true
		f.log.Warn(msg, args...)
		if live != nil {
			f.setCur(live, liveInfo, true, 0)
		}
		return nil
	}
	if err := p.check(); err != nil {
		// Not a position this package saved: nothing in it can be
		// trusted to find a file or an offset.
		return startOver("saved position is damaged: reading the live file from the beginning", "err", err)
	}
	saved := func(fi os.FileInfo) bool {
		dev, ino := fileID(fi)
		// The device number can change across a reboot or remount; the
		// head fingerprint, checked next, is what really identifies.
		return ino == p.Inode && (dev == p.Dev || p.HeadLen > 0)
	}

	if live != nil && saved(liveInfo) {
		if f.resumeLive(live, liveInfo, p, true) {
			return nil
		}
		f.log.Warn("file was truncated or rewritten while we were down (its first bytes changed): reading it from the beginning",
			"saved_offset", p.Offset)
		f.stats.truncations.Add(1)
		f.startedOver = true
		f.setCur(live, liveInfo, true, 0)
		return nil
	}

	if found, newer, ok := rolledAfter(f.path, f.opts.LineTime, saved); ok {
		rolled := f.openRolled([]*rolledFile{found}, liveInfo)
		if len(rolled) == 1 && hasHead(rolled[0].f, p) && found.info.Size() >= p.Offset {
			rolled[0].from = p.Offset
			rolled = append(rolled, f.openRolled(newer, liveInfo)...)
			f.backlog = rolled
			if live != nil {
				f.backlog = append(f.backlog, queued{f: live, info: liveInfo, live: true})
			}
			f.log.Info("resuming in a rolled file", "rolled", found.name, "offset", p.Offset, "rolled_after", len(newer))
			return nil
		}
		for _, q := range rolled {
			q.f.Close()
		}
	}
	// A file is its content: one under another inode that starts with the
	// saved bytes is a copy of ours (a restore, `cp -p` and `mv`).
	if live != nil && p.HeadLen > 0 && f.resumeLive(live, liveInfo, p, false) {
		return nil
	}
	return startOver("saved position matches no file: reading the live file from the beginning; lines rotated away while we were down are lost",
		"inode", p.Inode, "offset", p.Offset)
}

// resumeLive resumes in the live file if it starts with the saved head: at
// the saved offset when it is that long, else at its end, as a live partial
// truncation goes on (a shorter file with our first bytes is an older copy
// restored, or ours cut short: what it lacks was read already). sameInode
// says whether it is the saved file itself or a copy; each case but the
// plain resume is logged at WARN once.
func (f *Follower) resumeLive(live *os.File, fi os.FileInfo, p Position, sameInode bool) bool {
	if !hasHead(live, p) {
		return false
	}
	switch {
	case fi.Size() >= p.Offset && sameInode:
		f.log.Info("resuming", "offset", p.Offset)
		f.setCur(live, fi, true, p.Offset)
	case fi.Size() >= p.Offset:
		f.log.Warn("file was replaced while we were down by a copy (the same first bytes under another inode): resuming at the saved offset",
			"offset", p.Offset, "saved_inode", p.Inode)
		f.setCur(live, fi, true, p.Offset)
	default:
		f.log.Warn("file is shorter than the saved position but starts with the same bytes (an older copy restored, or cut short): "+
			"going on at its end; the lines up to the saved offset were read before",
			"saved_offset", p.Offset, "size", fi.Size(), "same_inode", sameInode)
		f.stats.partialTruncations.Add(1)
		f.setCur(live, fi, true, fi.Size())
	}
	return true
}

// StartedOver reports whether the Start position could not be resumed and
// reading began at the beginning of the live file instead (its first bytes
// changed, or the saved file matches no file): lines delivered since may
// have been delivered before the stop. Call it from Read's goroutine.
func (f *Follower) StartedOver() bool { return f.startedOver }

// hasHead reports whether fh starts with the bytes p was saved with; p has
// passed check.
func hasHead(fh *os.File, p Position) bool {
	if p.HeadLen == 0 {
		return true
	}
	b := make([]byte, p.HeadLen)
	n, _ := fh.ReadAt(b, 0)
	return n == p.HeadLen && headHash(b) == p.HeadHash
}
