package logparse

import (
	"encoding/binary"
	"time"
)

// tsCache remembers the last minute it converted. Broker logs print many
// lines per minute, so most timestamps cost a 16-byte compare and an Add
// instead of a time.Date with a zone lookup. Zone offsets only change on
// minute boundaries, so adding seconds inside the cached minute is exact.
type tsCache struct {
	key  [2]uint64 // "yyyy-MM-dd HH:mm", as two words: compared without a call
	base int64     // the minute's Unix seconds, in the location it was read in
	ok   bool

	// The last offset into the minute and its result: a busy broker prints
	// many lines in the same millisecond.
	lastOff time.Duration
	last    time.Time
}

// digits reads n decimal digits from s at i.
func digits(s []byte, i, n int) (int, bool) {
	v := 0
	for j := i; j < i+n; j++ {
		if j >= len(s) || !isDigit(s[j]) {
			return 0, false
		}
		v = v*10 + int(s[j]-'0')
	}
	return v, true
}

// brokerTime reads "yyyy-MM-dd HH:mm:ss,SSS" (also 'T' and '.' separators)
// in loc. The broker's %d has no zone: it is the JVM's local time.
func (c *tsCache) brokerTime(s []byte, loc *time.Location) (time.Time, bool) {
	if len(s) < 19 {
		return time.Time{}, false
	}
	sec, ok1 := digits(s, 17, 2)
	if !ok1 || sec > 59 {
		return time.Time{}, false
	}
	var nanos int
	if ms, ok := digits(s, 20, 3); ok && len(s) == brokerTSLen && (s[19] == ',' || s[19] == '.') {
		nanos = ms * 1_000_000 // log4j's %d: exactly three digits
	} else if len(s) > 20 && (s[19] == ',' || s[19] == '.') {
		i, scale := 20, 100_000_000
		for i < len(s) && isDigit(s[i]) && scale > 0 {
			nanos += int(s[i]-'0') * scale
			scale /= 10
			i++
		}
	}
	off := time.Duration(sec)*time.Second + time.Duration(nanos)
	k0, k1 := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
	if c.ok && c.key[0] == k0 && c.key[1] == k1 {
		if off != c.lastOff {
			c.lastOff, c.last = off, c.at(sec, nanos, loc)
		}
		return c.last, true
	}
	y, ok1 := digits(s, 0, 4)
	mo, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	h, ok4 := digits(s, 11, 2)
	mi, ok5 := digits(s, 14, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 {
		return time.Time{}, false
	}
	c.base = time.Date(y, time.Month(mo), d, h, mi, 0, 0, loc).Unix()
	c.key = [2]uint64{k0, k1}
	c.ok = true
	c.lastOff, c.last = off, c.at(sec, nanos, loc)
	return c.last, true
}

// at is the cached minute plus sec seconds and nanos nanoseconds. It builds
// the same Time as time.Date's result plus Add (the zone offset does not
// change inside a minute), in half the time of Add.
func (c *tsCache) at(sec, nanos int, loc *time.Location) time.Time {
	return time.Unix(c.base+int64(sec), int64(nanos)).In(loc)
}

// headerTime reads a header's timestamp, broker-style or ISO-8601; an
// empty one (slf4j-simple) is no time.
func (c *tsCache) headerTime(s []byte, loc *time.Location) (time.Time, bool) {
	switch {
	case len(s) == 0:
		return time.Time{}, false
	case len(s) == brokerTSLen: // no zone: brokerTime reads a 'T' too
		return c.brokerTime(s, loc)
	}
	return c.isoTime(s, loc)
}

// isoTime reads an ISO-8601 timestamp as printed by Spring Boot or
// container runtimes. With a zone ('Z' or ±hh:mm) the instant is exact and
// returned in UTC; without one it is read in loc like a broker timestamp.
func (c *tsCache) isoTime(s []byte, loc *time.Location) (time.Time, bool) {
	i := 19
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i >= len(s) || (s[i] != 'Z' && s[i] != '+' && s[i] != '-') {
		return c.brokerTime(s, loc)
	}
	var off int
	if s[i] != 'Z' {
		h, ok := digits(s, i+1, 2)
		if !ok {
			return c.brokerTime(s, loc)
		}
		j := i + 3
		if j < len(s) && s[j] == ':' {
			j++
		}
		m, _ := digits(s, j, 2)
		off = h*3600 + m*60
		if s[i] == '-' {
			off = -off
		}
	}
	// A zoned instant is exact: read the wall clock as UTC and shift by the
	// printed offset. Not cached: the cache is per location.
	var utc tsCache
	t, ok := utc.brokerTime(s, time.UTC)
	if !ok {
		return t, false
	}
	return t.Add(-time.Duration(off) * time.Second), true
}
