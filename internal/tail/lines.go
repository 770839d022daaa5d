package tail

import "bytes"

// lineSplitter cuts a byte stream into complete '\n'-terminated lines. A
// trailing partial line is held until its newline arrives; a line longer than
// max bytes is cut so that memory stays bounded whatever the file contains.
type lineSplitter struct {
	max     int
	pending []byte // start of a line whose '\n' has not arrived yet
	// skipping is set after a cut: the rest of the over-long line, up to
	// and including its '\n', is discarded.
	skipping bool
	// base is the file offset of the chunk being split; end, set before
	// each deliver, the file offset just after the line delivered.
	base, end int64
}

// split delivers every complete line of chunk, without the '\n' and without
// a trailing '\r'. It returns the number of lines delivered and how many of
// them were cut at max bytes.
func (s *lineSplitter) split(chunk []byte, deliver func([]byte)) (lines, cut uint64) {
	whole := len(chunk)
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if s.skipping {
			if i < 0 {
				return lines, cut
			}
			s.skipping = false
			chunk = chunk[i+1:]
			continue
		}
		if i < 0 {
			room := s.max - len(s.pending)
			if len(chunk) <= room {
				s.pending = append(s.pending, chunk...)
				return lines, cut
			}
			// The line is already longer than max and still has no end:
			// deliver the first max bytes now rather than buffer it all.
			s.pending = append(s.pending, chunk[:room]...)
			s.end = s.base + int64(whole-len(chunk)+room)
			deliver(s.pending)
			s.pending = s.pending[:0]
			s.skipping = true
			return lines + 1, cut + 1
		}
		line := chunk[:i]
		chunk = chunk[i+1:]
		lines++
		s.end = s.base + int64(whole-len(chunk))
		if len(s.pending) > 0 {
			room := s.max - len(s.pending)
			if len(line) > room {
				line, cut = line[:room], cut+1
			}
			s.pending = append(s.pending, line...)
			deliver(trimCR(s.pending))
			s.pending = s.pending[:0]
			continue
		}
		if len(line) > s.max {
			line, cut = line[:s.max], cut+1
		}
		deliver(trimCR(line))
	}
	return lines, cut
}

// held is the number of bytes read but not yet delivered: the pending
// partial line. Bytes being skipped after a cut count as consumed.
func (s *lineSplitter) held() int { return len(s.pending) }

// flush delivers a held partial line, for a file that will not grow any more
// (a rotated file, the end of a pipe). It reports whether a line was delivered.
func (s *lineSplitter) flush(deliver func([]byte)) bool {
	s.skipping = false
	if len(s.pending) == 0 {
		return false
	}
	s.end = s.base + int64(len(s.pending))
	deliver(trimCR(s.pending))
	s.pending = s.pending[:0]
	return true
}

// drop forgets a held partial line, for a file that was truncated under it.
// It reports whether there was one.
func (s *lineSplitter) drop() bool {
	s.skipping = false
	had := len(s.pending) > 0
	s.pending = s.pending[:0]
	return had
}

func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
