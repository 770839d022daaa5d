package logparse

import (
	"bytes"
	"time"
)

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
		switch {
		case bytes.IndexByte(body, esc) >= 0:
			body = stripANSI(nil, body)
		case len(body) > 0 && body[0] == '{':
			body, _, _ = ecsLine(nil, nil, body)
		default:
			return time.Time{}, false
		}
		if !splitHeaderPrefix(body, &h) {
			return time.Time{}, false
		}
	}
	var c tsCache
	return c.headerTime(h.ts, loc)
}
