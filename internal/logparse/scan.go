package logparse

import (
	"bytes"
	"encoding/binary"
)

// Byte-scanning helpers. Every parser in this package works on []byte with
// these instead of regexp: a busy broker prints these lines by the million,
// and a hand scan allocates nothing (docs/benchmarks.md compares it with a
// regexp baseline). Each helper returns ok=false instead of failing, so
// malformed input just falls through to "not ours".

// cut returns s without prefix, if s starts with prefix.
func cut(s []byte, prefix string) ([]byte, bool) {
	if len(s) < len(prefix) || string(s[:len(prefix)]) != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// index is bytes.Index for a string sep, without converting sep to a slice:
// a conversion longer than 32 bytes allocates unless the compiler inlines it
// at a constant, which profile-guided inlining does not promise.
func index(s []byte, sep string) int {
	if len(sep) == 0 {
		return 0
	}
	for i := 0; len(s)-i >= len(sep); i++ {
		j := bytes.IndexByte(s[i:len(s)-len(sep)+1], sep[0])
		if j < 0 {
			return -1
		}
		if i += j; string(s[i:i+len(sep)]) == sep {
			return i
		}
	}
	return -1
}

// skipTo returns what follows the first occurrence of sep in s.
func skipTo(s []byte, sep string) ([]byte, bool) {
	i := index(s, sep)
	if i < 0 {
		return s, false
	}
	return s[i+len(sep):], true
}

// maxDigits bounds number parsing so that overflow cannot happen: 18 decimal
// digits always fit an int64. Longer numbers are treated as malformed.
const maxDigits = 18

// num parses a non-negative decimal at the start of s.
func num(s []byte) (int64, []byte, bool) {
	var v int64
	i := 0
	for i < len(s) && i < maxDigits+1 && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 || i > maxDigits {
		return 0, s, false
	}
	return v, s[i:], true
}

// snum parses a decimal with an optional leading '-'.
func snum(s []byte) (int64, []byte, bool) {
	if len(s) > 0 && s[0] == '-' {
		v, rest, ok := num(s[1:])
		return -v, rest, ok
	}
	return num(s)
}

// id parses a broker id / partition number (int32 range).
func id(s []byte) (int32, []byte, bool) {
	v, rest, ok := snum(s)
	if !ok || v > 1<<31-1 || v < -1<<31 {
		return 0, s, false
	}
	return int32(v), rest, true
}

// numAll parses s as a whole decimal (nothing may follow).
func numAll(s []byte) (int64, bool) {
	v, rest, ok := snum(s)
	return v, ok && len(rest) == 0
}

// numAfter finds key in s and parses the number that follows it.
func numAfter(s []byte, key string) (int64, []byte, bool) {
	rest, ok := skipTo(s, key)
	if !ok {
		return 0, s, false
	}
	return snum(rest)
}

// trimSuffixByte drops one trailing c, if present.
func trimSuffixByte(s []byte, c byte) []byte {
	if len(s) > 0 && s[len(s)-1] == c {
		return s[:len(s)-1]
	}
	return s
}

// intList parses "1,2,3" or "1, 2, 3" (possibly empty) into dst.
// It stops at the first byte that is neither digit, ',', ' ' nor '-'.
func intList(dst []int32, s []byte) ([]int32, []byte, bool) {
	for {
		for len(s) > 0 && (s[0] == ' ' || s[0] == ',') {
			s = s[1:]
		}
		if len(s) == 0 || (s[0] < '0' || s[0] > '9') && s[0] != '-' {
			return dst, s, true
		}
		v, rest, ok := id(s)
		if !ok {
			return dst, s, false
		}
		dst = append(dst, v)
		s = rest
	}
}

// setBody strips a Scala or Java collection wrapper — "Set(…)",
// "HashSet(…)", "List(…)", "ListBuffer(…)" or "[…]" — and returns its body
// and what follows the closing bracket. An unclosed wrapper (the KAFKA-15583
// line never closes its parenthesis) returns the rest of s as the body.
func setBody(s []byte) (body, rest []byte, ok bool) {
	i := 0
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z') {
		i++
	}
	if i >= len(s) {
		return nil, s, false
	}
	closer := byte(')')
	switch s[i] {
	case '(':
	case '[':
		closer = ']'
	default:
		return nil, s, false
	}
	s = s[i+1:]
	j := bytes.IndexByte(s, closer)
	if j < 0 {
		return s, nil, true
	}
	return s[:j], s[j+1:], true
}

// maxTopicLen is the longest topic name Kafka accepts.
const maxTopicLen = 249

// topicByte marks the bytes Kafka allows in a topic name: [a-zA-Z0-9._-].
var topicByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	return t
}()

// ValidTopicName reports whether name is a topic name Kafka could have
// created, [a-zA-Z0-9._-]{1,249}: the one rule both halves of the exporter
// apply before a topic becomes a label.
func ValidTopicName(name string) bool {
	if len(name) == 0 || len(name) > maxTopicLen {
		return false
	}
	for i := range len(name) {
		if !topicByte[name[i]] {
			return false
		}
	}
	return true
}

// validTopic reports whether b is a topic name Kafka could have created. A
// name that is not one comes from a corrupt or forged line, and it must not
// become a metric label (Prometheus rejects a scrape with invalid UTF-8).
func validTopic(b []byte) bool {
	if len(b) == 0 || len(b) > maxTopicLen {
		return false
	}
	for _, c := range b {
		if !topicByte[c] {
			return false
		}
	}
	return true
}

// splitTopicPartition splits "<topic>-<p>" on the last '-'.
func splitTopicPartition(tp []byte) (topic []byte, partition int32, ok bool) {
	i := bytes.LastIndexByte(tp, '-')
	if i <= 0 || i == len(tp)-1 {
		return nil, -1, false
	}
	p, rest, ok := id(tp[i+1:])
	if !ok || len(rest) != 0 || p < 0 {
		return nil, -1, false
	}
	return tp[:i], p, true
}

// word returns s up to the first space (or all of s) and the remainder.
func word(s []byte) (w, rest []byte) {
	i := bytes.IndexByte(s, ' ')
	if i < 0 {
		return s, nil
	}
	return s[:i], s[i:]
}

// isTopicID reports whether s looks like a 22-char URL-safe base64 Kafka Uuid.
func isTopicID(s []byte) bool {
	if len(s) != 22 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// sameBytes reports whether a and b hold the same bytes. From 8 to 32 bytes
// (logger names, "<topic>-<p> broker=<b>") it compares overlapping 8-byte
// words inline: these compares run once per line, and a call would cost more
// than the compare itself.
func sameBytes(a, b []byte) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n < 8 || n > 32 {
		return string(a) == string(b)
	}
	le := binary.LittleEndian
	if le.Uint64(a) != le.Uint64(b) || le.Uint64(a[n-8:]) != le.Uint64(b[n-8:]) {
		return false
	}
	return n <= 16 || le.Uint64(a[8:]) == le.Uint64(b[8:]) && le.Uint64(a[n-16:]) == le.Uint64(b[n-16:])
}
