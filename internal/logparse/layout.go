package logparse

import "bytes"

// Layouts recognized without configuration. Detection is per
// line, so a file that mixes layouts (a compose stream of several images)
// still splits correctly.
type layout uint8

const (
	layoutNone    layout = iota
	layoutDefault        // Apache/Confluent/Bitnami "[%d] %p %m (%c)"
	layoutStrimzi        // "%d{ISO8601} %p %m (%c) [%t]"
	layoutSpring         // Spring Boot "2025-02-03T08:15:00.123Z  INFO 4242 --- [t] logger : msg"
	layoutSimple         // slf4j-simple "[thread] LEVEL logger - msg"
	layoutTTCC           // log4j's "%d [%t] %-5p %c - %m" (the date broker-style or ISO-8601)
)

// header is one record's first line cut into its layout fields.
type header struct {
	kind   layout
	ts     []byte // timestamp text as printed (broker-style or ISO-8601); empty for slf4j-simple
	level  Level
	msg    []byte // the log message (%m): no timestamp, level, logger or thread
	logger []byte // %c; empty when the layout has it elsewhere and it is missing
}

// brokerTSLen is len("2025-10-16 15:57:12,614"), log4j's default %d.
const brokerTSLen = 23

// isBrokerTS reports whether s starts with "yyyy-MM-dd HH:mm:ss,SSS".
// It checks the separators and a few digits only: the Parser validates the
// digits fully when it reads the time, and the Splitter needs just a cheap,
// reliable "does a record start here".
func isBrokerTS(s []byte) bool {
	return len(s) >= brokerTSLen &&
		s[4] == '-' && s[7] == '-' && s[10] == ' ' && s[13] == ':' && s[16] == ':' &&
		(s[19] == ',' || s[19] == '.') && isDigit(s[0]) && isDigit(s[22])
}

// isISOTS reports whether s starts with "yyyy-MM-ddTHH:mm:ss".
func isISOTS(s []byte) bool {
	return len(s) >= 19 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
		isDigit(s[0]) && isDigit(s[18])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// level reads a log4j level word at the start of s and returns the number
// of bytes it used. The word must be followed by a space or the end of s.
func level(s []byte) (Level, int) {
	var l Level
	var n int
	if len(s) < 4 {
		return LevelUnknown, 0
	}
	switch s[0] {
	case 'T':
		l, n = LevelTrace, 5
	case 'D':
		l, n = LevelDebug, 5
	case 'I':
		l, n = LevelInfo, 4
	case 'W':
		l, n = LevelWarn, 4
	case 'E':
		l, n = LevelError, 5
	case 'F':
		l, n = LevelFatal, 5
	default:
		return LevelUnknown, 0
	}
	if len(s) < n || (len(s) > n && s[n] != ' ') {
		return LevelUnknown, 0
	}
	name := levelNames[l]
	for i := 1; i < n; i++ {
		if s[i] != name[i] {
			return LevelUnknown, 0
		}
	}
	return l, n
}

// skipSpaces drops leading spaces (layouts that pad %p with %-5p).
func skipSpaces(s []byte) []byte {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// isoTSLen returns the length of an ISO-8601 timestamp at the start of s
// ("2025-02-03T08:15:00.123Z", "…,123+01:00", "…00Z"), or 0.
func isoTSLen(s []byte) int {
	if !isISOTS(s) {
		return 0
	}
	i := 19
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) {
		switch s[i] {
		case 'Z':
			i++
		case '+', '-':
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == ':') && j-i <= 6 {
				j++
			}
			i = j
		}
	}
	return i
}

// splitHeaderPrefix fills h.kind, h.ts, h.level and h.msg (still carrying any
// trailing logger/thread) from line. It is the cheap part of layout parsing
// that both the Splitter and the Parser's fast reject path need.
func splitHeaderPrefix(line []byte, h *header) bool {
	if len(line) < 10 {
		return false
	}
	if l, n := defaultHeader(line); n > 0 {
		h.kind, h.ts, h.level, h.msg = layoutDefault, line[1:brokerTSLen+1], l, line[n:]
		return true
	}
	return splitHeaderAny(line, h)
}

// splitHeaderAny is splitHeaderPrefix without the fast path: every layout.
func splitHeaderAny(line []byte, h *header) bool {
	if len(line) < 10 {
		return false
	}
	switch {
	case line[0] == '[' && isBrokerTS(line[1:]) && len(line) > brokerTSLen+2 && line[brokerTSLen+1] == ']' && line[brokerTSLen+2] == ' ':
		// [2025-10-16 15:57:12,614] DEBUG …
		l, n := level(line[brokerTSLen+3:])
		if n == 0 {
			return false
		}
		h.kind, h.ts, h.level = layoutDefault, line[1:brokerTSLen+1], l
		h.msg = line[brokerTSLen+3+n:]
	case line[0] == '[' && isISOTS(line[1:]):
		// [2025-10-16T15:57:12.614Z] DEBUG …: the default layout with an ISO-8601 %d.
		n := 1 + isoTSLen(line[1:])
		if n+1 >= len(line) || line[n] != ']' || line[n+1] != ' ' {
			return false
		}
		l, ln := level(skipSpaces(line[n+2:]))
		if ln == 0 {
			return false
		}
		h.kind, h.ts, h.level = layoutDefault, line[1:n], l
		h.msg = skipSpaces(line[n+2:])[ln:]
	case isBrokerTS(line) && len(line) > brokerTSLen+1:
		// Strimzi "2024-03-02 11:04:10,311 INFO …", log4j's
		// "%d [%t] %-5p %c - %m", or the default layout pasted without its
		// leading '[' (a copy-paste artifact).
		rest := line[brokerTSLen:]
		pasted := rest[0] == ']'
		if pasted {
			rest = rest[1:]
		}
		if !afterTimestamp(line[:brokerTSLen], rest, h) {
			return false
		}
		if pasted {
			h.kind = layoutDefault
		}
	case line[0] != '[':
		// An ISO-8601 date: Spring Boot, log4j2's %d{ISO8601} (Strimzi's
		// pattern on Kafka 4), "%d [%t] %-5p %c - %m".
		n := isoTSLen(line)
		if n == 0 || n >= len(line) {
			return false
		}
		if !afterTimestamp(line[:n], line[n:], h) {
			return false
		}
	default:
		// slf4j-simple: "[thread] LEVEL logger - msg". Thread names have no ']'.
		end := bytes.IndexByte(line, ']')
		if end < 0 || end+2 >= len(line) || line[end+1] != ' ' {
			return false
		}
		l, n := level(line[end+2:])
		if n == 0 {
			return false
		}
		h.kind, h.ts, h.level = layoutSimple, nil, l
		h.msg = line[end+2+n:]
	}
	h.msg = skipSpaces(h.msg) // %-5p pads INFO and WARN
	return true
}

// afterTimestamp reads what follows a date that starts the line: a level
// (padded or not), or a "[thread] " and then the level; rest starts with
// the space after the date. The layout is Spring Boot's when the level is
// followed by "<pid> --- ", log4j's TTCC when the thread comes first, and
// Strimzi's ("%m (%c) [%t]", or any "%p %m" layout) otherwise.
func afterTimestamp(ts, rest []byte, h *header) bool {
	if len(rest) < 2 || rest[0] != ' ' {
		return false
	}
	kind := layoutStrimzi
	if rest[1] == '[' {
		// "%d [%t] %-5p": a thread name has no "] ".
		end := bytes.Index(rest, []byte("] "))
		if end < 0 {
			return false
		}
		rest, kind = rest[end+1:], layoutTTCC
	}
	rest = skipSpaces(rest)
	l, n := level(rest)
	if n == 0 {
		return false
	}
	h.ts, h.level, h.msg = ts, l, rest[n:]
	if kind == layoutStrimzi && isSpringPID(skipSpaces(h.msg)) {
		kind = layoutSpring
	}
	h.kind = kind
	return true
}

// isSpringPID reports whether s starts with Spring Boot's "<pid> --- ".
func isSpringPID(s []byte) bool {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i > 0 && hasPrefix(s[i:], " --- ")
}

// splitLogger moves the logger (and Strimzi's thread) out of h.msg.
// Called only for records that passed the message prefilter.
func splitLogger(h *header) {
	m := h.msg
	switch h.kind {
	case layoutStrimzi:
		// "… (logger) [thread]"
		if len(m) > 0 && m[len(m)-1] == ']' {
			if i := bytes.LastIndex(m, []byte(") [")); i >= 0 {
				m = m[:i+1]
			}
		}
		fallthrough
	case layoutDefault:
		// "… (logger)"
		// One backward pass over the logger name, then " (".
		if n := len(m); n > 0 && m[n-1] == ')' {
			i := n - 2
			for i >= 0 && isLoggerByte(m[i]) {
				i--
			}
			if i > 0 && i < n-2 && m[i] == '(' && m[i-1] == ' ' {
				h.logger = m[i+1 : n-1]
				m = m[:i-1]
			}
		}
	case layoutSpring:
		// "4242 --- [app] [thread] logger                  : msg"
		if i := bytes.Index(m, []byte(" : ")); i >= 0 {
			pre := bytes.TrimRight(m[:i], " ")
			if j := bytes.LastIndexByte(pre, ' '); j >= 0 {
				h.logger = pre[j+1:]
			}
			m = m[i+3:]
		}
	case layoutSimple, layoutTTCC:
		// "logger - msg"
		if i := bytes.Index(m, []byte(" - ")); i >= 0 {
			h.logger = m[:i]
			m = m[i+3:]
		}
	}
	h.msg = m
}

// isLoggerName reports whether s looks like a Java class / logger name
// ("kafka.cluster.Partition", "kafka.log.UnifiedLog$", "state.change.logger").
func isLoggerName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if !isLoggerByte(c) {
			return false
		}
	}
	return true
}

func isLoggerByte(c byte) bool { return loggerBytes[c] }

// threadThenIdent reports whether m starts with a "[word] " — a thread name
// printed before the message ("[%d] %-5p [%t] %m") — and then with an ident
// prefix the parser knows. A Kafka ident prefix has a space inside its
// brackets ("[Partition t-0 broker=1] "), or is followed by no other.
func threadThenIdent(m []byte) bool {
	n := peelBracket(m)
	return n > 0 && prefilter(m[n:]) != identNone
}

// peelBracket returns the length of a "[word] " at the start of m, or 0:
// its first space follows the closing bracket.
func peelBracket(m []byte) int {
	if i := bytes.IndexByte(m, ' '); i > 2 && m[i-1] == ']' && m[0] == '[' {
		return i + 1
	}
	return 0
}

// peel drops one field a layout printed between the level and the message:
// a "[thread] " or "[logger] " (%t, %c{1} in brackets), or a "logger - " /
// "logger : " (%c, %c{1.}, padded or not), which becomes h.logger. It
// reports whether it dropped one.
func peel(h *header) bool {
	m := h.msg
	if n := peelBracket(m); n > 0 {
		h.msg = m[n:]
		return true
	}
	i := 0
	for i < len(m) && isLoggerByte(m[i]) {
		i++
	}
	if i == 0 || i == len(m) || m[i] != ' ' {
		return false
	}
	rest := skipSpaces(m[i:])
	if len(rest) < 2 || (rest[0] != '-' && rest[0] != ':') || rest[1] != ' ' {
		return false
	}
	h.logger, h.msg = m[:i], rest[2:]
	return true
}

// loggerBytes is the byte class of Java class / logger names, as a table:
// the backward scan over a logger name runs once per event.
var loggerBytes = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '$' || c == '-'
	}
	return t
}()

// defaultHeader is the fast path for the layout almost every broker uses,
// "[yyyy-MM-dd HH:mm:ss,SSS] LEVEL msg": fixed offsets and one 4-byte compare
// for the level. It returns the level and the offset of the message, or
// n == 0 when the line is not exactly that (splitHeaderPrefix then tries
// every layout, this one with padded levels included).
func defaultHeader(line []byte) (Level, int) {
	if len(line) < 33 {
		return LevelUnknown, 0
	}
	_ = line[32]
	if line[0] != '[' || line[24] != ']' || line[25] != ' ' ||
		line[5] != '-' || line[8] != '-' || line[11] != ' ' || line[14] != ':' || line[17] != ':' ||
		(line[20] != ',' && line[20] != '.') || !isDigit(line[1]) || !isDigit(line[23]) {
		return LevelUnknown, 0
	}
	w := uint32(line[26]) | uint32(line[27])<<8 | uint32(line[28])<<16 | uint32(line[29])<<24
	switch {
	case w == word4("INFO") && line[30] == ' ' && line[31] != ' ':
		return LevelInfo, 31
	case w == word4("WARN") && line[30] == ' ' && line[31] != ' ':
		return LevelWarn, 31
	case line[31] != ' ' || line[32] == ' ':
		return LevelUnknown, 0
	case w == word4("DEBU") && line[30] == 'G':
		return LevelDebug, 32
	case w == word4("TRAC") && line[30] == 'E':
		return LevelTrace, 32
	case w == word4("ERRO") && line[30] == 'R':
		return LevelError, 32
	case w == word4("FATA") && line[30] == 'L':
		return LevelFatal, 32
	}
	return LevelUnknown, 0
}

// word4 is the little-endian uint32 of a 4-byte string (a constant after inlining).
func word4(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// Recognized reports whether r reads as a record Kafka's own code logged, in
// a layout this package knows: a header the Splitter found, and a message
// that starts with one of Kafka's bracketed ident prefixes ("[Partition
// t-0 broker=1] ", "[GroupCoordinator id=1] ", "[KafkaApi-1] ") — after any
// thread or logger the layout put before it — or a Kafka logger name. A
// followed file whose records never do is in a layout the parser does not
// know, even though it reads lines: nothing else tells it from a quiet broker.
func (r *Record) Recognized() bool {
	var h header
	switch {
	case r.kind != layoutNone && r.spanOK():
		r.header(&h)
	case !splitHeaderPrefix(r.First, &h):
		return false
	}
	if h.kind == layoutSpring || h.kind == layoutSimple || h.kind == layoutTTCC {
		splitLogger(&h)
	}
	for i := 0; i < 3; i++ {
		if isKafkaLogger(h.logger) || isIdent(h.msg) {
			return true
		}
		if !peel(&h) {
			break
		}
	}
	splitLogger(&h) // "… (logger)" at the end
	return isKafkaLogger(h.logger)
}

// isIdent reports whether m starts with a Kafka ident prefix: "[Name",
// then a space or "-<n>]" ("[KafkaApi-1]").
func isIdent(m []byte) bool {
	if len(m) < 4 || m[0] != '[' || m[1] < 'A' || m[1] > 'Z' {
		return false
	}
	i := 2
	for i < len(m) && (m[i] >= 'a' && m[i] <= 'z' || m[i] >= 'A' && m[i] <= 'Z') {
		i++
	}
	return i < len(m) && (m[i] == ' ' || m[i] == '-' || m[i] == ']')
}

// isKafkaLogger reports whether a logger name is one of Kafka's, in full or
// abbreviated by %c{1.} ("k.c.Partition", "o.a.k.c.QuorumController").
func isKafkaLogger(l []byte) bool {
	for _, p := range []string{"kafka.", "org.apache.kafka.", "state.change.logger", "k.", "o.a.k."} {
		if hasPrefix(l, p) {
			return true
		}
	}
	return false
}
