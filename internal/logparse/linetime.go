package logparse

import "time"

// LineTime returns the time of the record a physical line starts: the
// broker's timestamp, in any layout the Splitter recognizes and after any
// container envelope is stripped, read in loc as the Parser reads an event's
// time. ok is false for a line that starts no record (a continuation line,
// junk) or whose layout prints no time (slf4j-simple). The follower orders
// rolled files by it, so a layout taught to the Parser orders them too.
func LineTime(line []byte, loc *time.Location) (t time.Time, ok bool) {
	body, _, _ := stripEnvelope(trimSuffixByte(line, '\r'))
	var h header
	if !splitHeaderPrefix(body, &h) {
		return time.Time{}, false
	}
	var c tsCache
	switch h.kind {
	case layoutDefault, layoutStrimzi:
		return c.brokerTime(h.ts, loc)
	case layoutSpring:
		return c.isoTime(h.ts, loc)
	}
	return time.Time{}, false
}
