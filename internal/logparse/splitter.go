package logparse

import "bytes"

// Bounds that keep a Splitter's memory constant whatever it is fed (a 10 MB
// line of junk, an endless stack trace). Cut bytes are counted as malformed.
const (
	MaxLineBytes = 64 << 10 // longest header line kept (and longest joined CRI line)
	MaxContBytes = 64 << 10 // most continuation bytes kept per record
)

// Record is one log4j record: a header line and its continuation lines.
type Record struct {
	First []byte // the header line with any envelope (CRI, docker --timestamps, docker compose "name | ") stripped, no '\n'
	Cont  []byte // continuation lines (also envelope-stripped) joined with '\n'; bounded (keep at most MaxContBytes, 64 KiB)
	Line  int    // 1-based line number of First in the stream pushed into this Splitter
	Lines int    // physical lines in the record

	// The header the Splitter already found in First, so the Parser does not
	// cut the same line twice. Zero (layoutNone) in a Record built by hand:
	// the Parser then reads First itself.
	headerSpan
}

// headerSpan is a header as offsets into the line it was cut from, so it
// survives the line's copy into the Splitter's buffer.
type headerSpan struct {
	kind         layout
	level        Level
	tsOff, tsEnd int32
	msgOff       int32
}

// setSpan records h, cut from line, in sp as offsets into line. It writes
// sp in place rather than returning a struct that would be copied once per
// line.
func setSpan(sp *headerSpan, line []byte, h *header) {
	sp.kind, sp.level, sp.msgOff = h.kind, h.level, int32(len(line)-len(h.msg))
	sp.tsOff, sp.tsEnd = 0, 0
	if len(h.ts) > 0 { // h.ts lies inside line: its offset is a capacity difference
		sp.tsOff = int32(cap(line) - cap(h.ts))
		sp.tsEnd = sp.tsOff + int32(len(h.ts))
	}
	if int(sp.msgOff) > MaxLineBytes {
		sp.kind = layoutNone // the line is cut inside the header: let the Parser look
	}
}

// recBuf owns the bytes of one Record.
type recBuf struct {
	first, cont []byte
	contLines   int // continuation lines joined so far (blank ones too)
	line, lines int
	headerSpan
}

// record fills r with b's record, field by field (see setSpan).
func (b *recBuf) record(r *Record) *Record {
	r.First, r.Cont, r.Line, r.Lines, r.headerSpan = b.first, b.cont, b.line, b.lines, b.headerSpan
	return r
}

// maxSources bounds the docker compose sources whose records are kept apart;
// the lines of any further source share the record of lines without one.
const maxSources = 16

// lane is the record being built for one source: lines without a compose
// prefix, or one compose service.
type lane struct {
	source []byte // the compose service name; empty for the unprefixed lane
	// bufs[cur] is being filled; the other backs the last returned Record.
	// Flipping an index is cheaper than swapping two structs.
	bufs    [2]recBuf
	cur     int
	pending bool
}

// Splitter joins continuation lines to their header and strips container
// envelopes. It is pure (no I/O) and not safe for concurrent use.
//
// Lines of several `docker compose` services may interleave: each source's
// continuation lines join that source's header, so records of different
// sources can come out of line order.
//
// A record is complete only when the next header of its source arrives, so
// the caller must call Flush until it returns nil at end of input, or when a
// followed file has been idle.
type Splitter struct {
	plain   lane    // lines without a compose prefix (and sources beyond maxSources)
	sources []*lane // one per compose service seen with a header line
	out     Record  // the last returned Record: handed out by pointer, not copied

	// CRI "P" chunks waiting for their "F" chunk.
	partial      []byte
	partialLine  int
	partialLines int

	line      int // physical lines pushed
	malformed int64

	uncolored []byte // a line with its ANSI color codes stripped
	ecs       []byte // an EcsLayout record rewritten as a header line
	ecsCont   []byte // and its continuation
}

// NewSplitter returns an empty Splitter.
func NewSplitter() *Splitter { return &Splitter{} }

// Push takes one physical line (without its '\n'; a trailing '\r' is
// tolerated). When the line starts a new record, the previous complete
// record of its source is returned; otherwise nil. The Record and its slices
// belong to the Splitter and are valid until the next Push/Flush call.
func (s *Splitter) Push(line []byte) *Record {
	s.line++
	line = trimSuffixByte(line, '\r')
	body, tag, source := stripEnvelope(line)
	switch {
	case tag == criPartial:
		if s.partialLines == 0 {
			s.partialLine = s.line
		}
		s.partial = s.appendBounded(s.partial, body, MaxLineBytes)
		s.partialLines++
		return nil
	case s.partialLines > 0 && tag == criFull:
		s.partial = s.appendBounded(s.partial, body, MaxLineBytes)
		rec := s.add(s.partial, source, s.partialLine, s.partialLines+1)
		s.partial, s.partialLines = s.partial[:0], 0
		return rec
	case s.partialLines > 0:
		// A plain line cannot finish CRI chunks: the P chunks were cut off.
		s.malformed += int64(s.partialLines)
		s.partial, s.partialLines = s.partial[:0], 0
	}
	if len(body) > 0 && body[0] == '{' {
		var ok bool
		if s.ecs, s.ecsCont, ok = ecsLine(s.ecs, s.ecsCont, body); ok {
			rec := s.add(s.ecs, source, s.line, 1)
			s.setCont(source, s.ecsCont)
			return rec
		}
	}
	return s.add(body, source, s.line, 1)
}

// setCont gives the record just begun for source the continuation cont
// (an EcsLayout record carries its exception in its own line).
func (s *Splitter) setCont(source, cont []byte) {
	l := s.lane(source, true)
	if !l.pending || len(cont) == 0 {
		return
	}
	c := &l.bufs[l.cur]
	c.cont, c.contLines = s.appendBounded(c.cont[:0], cont, MaxContBytes), 1
}

// appendBounded appends src to dst, keeping len(dst) ≤ limit; a cut counts
// one malformed line.
func (s *Splitter) appendBounded(dst, src []byte, limit int) []byte {
	room := limit - len(dst)
	if len(src) > room {
		if room > 0 {
			dst = append(dst, src[:room]...)
		}
		s.malformed++
		return dst
	}
	return append(dst, src...)
}

// lane returns the lane of a source. A header line may open a lane for a new
// source; a continuation line of a source never seen with a header joins the
// unprefixed lane, as it did before sources were told apart (a message such
// as "a | b" is not a compose prefix).
func (s *Splitter) lane(source []byte, header bool) *lane {
	if len(source) == 0 {
		return &s.plain
	}
	for _, l := range s.sources {
		if string(l.source) == string(source) {
			return l
		}
	}
	if header && len(s.sources) < maxSources {
		l := &lane{source: append([]byte(nil), source...)}
		s.sources = append(s.sources, l)
		return l
	}
	return &s.plain
}

// add files one logical line (n physical lines starting at lineNo) of a source.
func (s *Splitter) add(body, source []byte, lineNo, n int) (rec *Record) {
	var h header
	isHeader := splitHeaderPrefix(body, &h)
	if !isHeader && bytes.IndexByte(body, esc) >= 0 {
		// Color codes (a console appender's %highlight) hide the header.
		s.uncolored = stripANSI(s.uncolored[:0], body)
		body = s.uncolored
		isHeader = splitHeaderPrefix(body, &h)
	}
	if isHeader {
		l := s.lane(source, true)
		if l.pending {
			rec = l.bufs[l.cur].record(&s.out)
			l.cur ^= 1
		}
		c := &l.bufs[l.cur]
		setSpan(&c.headerSpan, body, &h)
		c.first = s.appendBounded(c.first[:0], body, MaxLineBytes)
		c.cont, c.contLines = c.cont[:0], 0
		c.line, c.lines = lineNo, n
		l.pending = true
		return rec
	}
	// Binary junk (e.g. the zero-filled tail of a crashed file) is dropped.
	// Only non-header lines are scanned for NUL: a line that starts with a
	// valid timestamp and level is a log record whatever bytes follow.
	if bytes.IndexByte(body, 0) >= 0 {
		s.malformed += int64(n)
		return nil
	}
	l := s.lane(source, false)
	if !l.pending {
		s.malformed += int64(n) // orphan continuation: its header was never seen
		return nil
	}
	c := &l.bufs[l.cur]
	c.lines += n
	if len(c.cont) >= MaxContBytes {
		s.malformed += int64(n)
		return nil
	}
	if c.contLines > 0 {
		c.cont = append(c.cont, '\n')
	}
	c.contLines++
	c.cont = s.appendBounded(c.cont, body, MaxContBytes)
	return nil
}

// Flush returns a pending record, if any (end of input, or a live follower
// that has been idle); call it until it returns nil, as several sources may
// each hold one. CRI partial chunks still waiting for their F chunk stay held.
func (s *Splitter) Flush() *Record {
	l := &s.plain
	for i := 0; !l.pending; i++ {
		if i == len(s.sources) {
			return nil
		}
		l = s.sources[i]
	}
	l.pending = false
	return l.bufs[l.cur].record(&s.out)
}

// Pending reports whether a record is held.
func (s *Splitter) Pending() bool {
	for _, l := range s.sources {
		if l.pending {
			return true
		}
	}
	return s.plain.pending
}

// Malformed returns the number of physical lines dropped as malformed so
// far: continuation lines before any header (orphans), lines containing
// NUL/binary junk, parts of over-long lines/records beyond the bounds. They
// are skipped, never fatal.
func (s *Splitter) Malformed() int64 { return s.malformed }
