package logparse

import (
	"bytes"
	"time"
)

// maxInterned bounds the intern table: a real cluster has a bounded set of
// topics and loggers, junk input must not grow memory without limit.
const maxInterned = 1 << 16

// Parser turns records into events. It holds scratch buffers and a
// topic-string intern table; it is NOT safe for concurrent use.
type Parser struct {
	// TypeOnly takes the lines that serve and verify count by type only
	// (isr_ack_progress, replica_leo, hw_skip: half of a TRACE log) on their
	// fixed prefix and leaves their values unset, but for an ack line's
	// Offset and AllAcked. `events`, which prints every field, reads them whole
	// (the default).
	TypeOnly bool

	loc    *time.Location
	ts     tsCache
	strs   map[string]string
	last   [2]string // most recently interned strings
	isr    []int32
	fromTo []int32 // FromISR and ToISR share one backing array
	oos    []ReplicaOffset
	acks   []ReplicaOffset // Acked and Awaiting share one backing array
	logger []byte          // scratch for a logger name cut by terminal wrapping

	malformed int64 // records rejected for a field Kafka cannot print (see Malformed)
	badTopic  bool  // the record being parsed named an illegal topic

	lastLogger string // logger of the last event (a valid logger name), for cutLastLogger
	lastLogB   []byte // lastLogger's bytes, for sameBytes
	lastPart   partitionIdent
}

// partitionIdent is the last "[Partition <topic>-<p> broker=<b>] " prefix
// parsed: a broker logs several lines in a row for one partition (6 on
// average in genlog's mix), and one compare then replaces the scan.
type partitionIdent struct {
	text              []byte // "<topic>-<p> broker=<b>"
	topic             string
	partition, broker int32
}

// NewParser returns a Parser that reads zone-less broker timestamps in loc
// (--log.timezone); nil means UTC.
func NewParser(loc *time.Location) *Parser {
	if loc == nil {
		loc = time.UTC
	}
	return &Parser{
		loc:    loc,
		strs:   make(map[string]string),
		isr:    make([]int32, 0, 16),
		fromTo: make([]int32, 0, 32),
		oos:    make([]ReplicaOffset, 0, 8),
		acks:   make([]ReplicaOffset, 0, 16),
	}
}

// Malformed returns how many records the parser recognized as replication
// lines but rejected because they name a topic Kafka could not have created
// (outside [a-zA-Z0-9._-], empty, or longer than 249 bytes). Such a record
// yields no event, so no state or label ever holds that name.
func (p *Parser) Malformed() int64 { return p.malformed }

// Parse turns one record into an event. ok=false means "not ours" (unknown
// line, other logger, junk) — never an error. Event.Line = rec.Line;
// Event.File is left empty (the caller sets it).
func (p *Parser) Parse(rec Record) (ev Event, ok bool) {
	ok = p.ParseInto(&rec, &ev)
	if !ok {
		ev = Event{}
	}
	return ev, ok
}

// ParseInto is Parse writing into *ev, for hot loops: Event is large, and
// returning it by value costs more than rejecting a line that is not ours. When it returns false, *ev holds garbage and must not be used.
func (p *Parser) ParseInto(rec *Record, ev *Event) bool {
	// Most lines of a busy log are not ours: a default-layout line is
	// rejected here on its message's first bytes, before parse sets up the
	// state it needs for a line that is.
	switch {
	case rec.kind == layoutNone:
		if l, n := defaultHeader(rec.First); n > 0 {
			kind := prefilter(rec.First[n:])
			if kind == identNone && !threadThenIdent(rec.First[n:]) {
				return false
			}
			return p.parse(rec, ev, kind, l, n)
		}
	case rec.kind == layoutDefault && rec.spanOK():
		kind := prefilter(rec.First[rec.msgOff:])
		if kind == identNone && !threadThenIdent(rec.First[rec.msgOff:]) {
			return false
		}
		return p.parse(rec, ev, kind, LevelUnknown, 0)
	}
	return p.parse(rec, ev, identNone, LevelUnknown, 0)
}

// spanOK reports whether the header span fits First (a Record built by hand
// may carry any offsets).
func (r *Record) spanOK() bool {
	return int(r.msgOff) <= len(r.First) && int(r.tsEnd) <= int(r.msgOff)
}

// parse is ParseInto after the not-ours check. kind is the message's ident
// when ParseInto classified it (identNone: not yet); n > 0 means First has
// the default layout with its message at n and level l.
func (p *Parser) parse(rec *Record, ev *Event, kind ident, l Level, n int) bool {
	var h header
	switch {
	case n > 0:
		// Field by field: a composite literal would be built on the stack
		// and then copied, once per line.
		h.kind, h.level = layoutDefault, l
		h.ts, h.msg = rec.First[1:brokerTSLen+1], rec.First[n:]
	case rec.kind == layoutNone:
		if !splitHeaderAny(rec.First, &h) {
			return false
		}
	case rec.spanOK():
		rec.header(&h)
	default:
		if !splitHeaderPrefix(rec.First, &h) {
			return false
		}
	}
	if kind == identNone {
		if h.kind == layoutSpring || h.kind == layoutSimple || h.kind == layoutTTCC {
			splitLogger(&h) // the message follows the logger in these layouts
		}
		// A thread or logger the layout printed before the message: at
		// most two ("[%t] [%c{1}] %m").
		for i := 0; ; i++ {
			if kind = prefilter(h.msg); kind != identNone {
				break
			}
			if i == 2 || !peel(&h) {
				return false
			}
		}
	}
	sameLogger := false // h.logger is p.lastLogger: no need to intern it
	if h.kind == layoutDefault || h.kind == layoutStrimzi {
		if sameLogger = p.cutLastLogger(&h); !sameLogger {
			splitLogger(&h)
		}
	}
	*ev = blankEvent
	ev.Level, ev.Line = h.level, rec.Line
	p.isr, p.fromTo, p.oos, p.acks = p.isr[:0], p.fromTo[:0], p.oos[:0], p.acks[:0]
	ok := false
	p.badTopic = false
	switch kind {
	case identPartition:
		ok = p.partition(ev, h.msg)
	case identBroker:
		ok = p.stateChange(ev, h.msg)
	case identReplicaManager:
		ok = p.produce(ev, h.msg, rec.Cont)
	case identFetcher:
		ok = p.fetcher(ev, h.msg)
	case identLog:
		ok = p.unifiedLog(ev, h.msg)
	case identEpochCache:
		ok = p.epochCache(ev, h.msg)
	case identController, identNoPrefix:
		ok = p.controller(ev, h.msg)
	case identServer:
		ok = p.brokerStart(ev, h.msg, h.logger)
	case identRaft:
		ok = p.raft(ev, h.msg)
	}
	if !ok {
		if p.badTopic {
			p.malformed++
		}
		return false
	}
	if len(h.logger) == 0 && len(rec.Cont) > 0 {
		h.logger = p.unwrapLogger(rec.First, rec.Cont)
	}
	if sameLogger {
		ev.Logger = p.lastLogger
	} else {
		ev.Logger = p.intern(h.logger)
		if ev.Logger != p.lastLogger && isLoggerName(h.logger) {
			p.lastLogger, p.lastLogB = ev.Logger, append(p.lastLogB[:0], ev.Logger...)
		}
	}
	if len(h.ts) == brokerTSLen { // the broker's %d, or an ISO-8601 date without a zone
		ev.Time, _ = p.ts.brokerTime(h.ts, p.loc)
	} else {
		ev.Time, _ = p.ts.headerTime(h.ts, p.loc)
	}
	return true
}

// header rebuilds in h the header the Splitter found in r.First.
func (r *Record) header(h *header) {
	h.kind, h.level = r.kind, r.level
	h.ts, h.msg = r.First[r.tsOff:r.tsEnd], r.First[r.msgOff:]
}

// blankEvent is what every event starts from: -1 marks "not on this line".
// Copying it is cheaper than building the literal each time.
var blankEvent = Event{
	Broker: -1, Partition: -1, Replica: -1, Leader: -1,
	Version: -1, PartitionEpoch: -1, LeaderEpoch: -1, StartOffset: -1, Epoch: -1, LargestOffset: -1,
}

// cutLastLogger is splitLogger's fast path for the default layout: most
// events come from the logger of the previous one, so compare the tail of
// the message with " (" + that logger + ")" before scanning it byte by byte.
// It finds exactly what splitLogger would: a logger name has no '('.
func (p *Parser) cutLastLogger(h *header) bool {
	m, name := h.msg, p.lastLogB
	if h.kind != layoutDefault || len(name) == 0 {
		return false
	}
	n := len(m) - len(name) - 3
	if n <= 0 || m[len(m)-1] != ')' || m[n+1] != '(' || m[n] != ' ' || !sameBytes(m[n+2:len(m)-1], name) {
		return false
	}
	h.logger, h.msg = m[n+2:len(m)-1], m[:n]
	return true
}

// ident is the message's ident prefix class, the first dispatch key.
type ident uint8

const (
	identNone ident = iota
	identPartition
	identBroker
	identReplicaManager
	identFetcher
	identLog
	identEpochCache
	identController
	identNoPrefix // controller lines printed without a prefix
	identServer   // the broker process starting (server.go)
	identRaft     // the metadata log's Raft client (quorum.go)
)

// prefilter classifies msg by its first bytes: most lines of a busy broker
// log are rejected here, before any field is parsed.
func prefilter(m []byte) ident {
	if len(m) < 12 {
		if string(m) == "starting" { // ZooKeeper mode's KafkaServer, logger split off
			return identServer
		}
		return identNone
	}
	if m[0] != '[' {
		switch m[0] {
		case 's':
			if hasPrefix(m, "starting (") || string(m) == "starting" {
				return identServer
			}
		case 'S':
			if hasPrefix(m, "Setting new leader for topicId ") {
				return identNoPrefix
			}
		case 'U':
			if hasPrefix(m, "UNCLEAN partition change for ") {
				return identNoPrefix
			}
		case 'F':
			if hasPrefix(m, "Fencing broker ") {
				return identNoPrefix
			}
		}
		return identNone
	}
	switch m[1] {
	case 'P':
		if hasPrefix(m, "[Partition ") {
			return identPartition
		}
	case 'B':
		if hasPrefix(m, "[Broker id=") {
			return identBroker
		}
		if hasPrefix(m, brokerServer) {
			return identServer
		}
	case 'R':
		if hasPrefix(m, "[ReplicaManager broker=") {
			return identReplicaManager
		}
		if hasPrefix(m, "[ReplicaFetcher replicaId=") {
			return identFetcher
		}
		if hasPrefix(m, raftPrefix) {
			return identRaft
		}
	case 'U':
		if hasPrefix(m, "[UnifiedLog partition=") {
			return identLog
		}
	case 'L':
		if hasPrefix(m, "[Log partition=") {
			return identLog
		}
		if hasPrefix(m, "[LeaderEpochCache ") {
			return identEpochCache
		}
	case 'M':
		if hasPrefix(m, "[MergedLog partition=") {
			return identLog
		}
	case 'Q':
		if hasPrefix(m, "[QuorumController id=") {
			return identController
		}
	case 'C':
		if hasPrefix(m, "[Controller ") {
			return identController
		}
	}
	return identNone
}

func hasPrefix(s []byte, prefix string) bool {
	return len(s) >= len(prefix) && string(s[:len(prefix)]) == prefix
}

// intern returns b as a string, allocating only the first time it is seen.
func (p *Parser) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	// Consecutive lines mostly name the same topic and logger: two compares
	// are cheaper than a map lookup.
	if string(b) == p.last[0] {
		return p.last[0]
	}
	if string(b) == p.last[1] {
		return p.last[1]
	}
	s, ok := p.strs[string(b)]
	if !ok {
		s = string(b)
		if len(p.strs) < maxInterned {
			p.strs[s] = s
		}
	}
	p.last[1], p.last[0] = p.last[0], s
	return s
}

// setTopicPartition fills Topic/Partition from "<topic>-<p>". Every topic
// the parser reads goes through here, so an illegal name is rejected in one
// place and the record is counted as malformed.
func (p *Parser) setTopicPartition(ev *Event, tp []byte) bool {
	topic, part, ok := splitTopicPartition(tp)
	if !ok {
		return false
	}
	if !validTopic(topic) {
		p.badTopic = true
		return false
	}
	ev.Topic, ev.Partition = p.intern(topic), part
	return true
}

// unwrapLogger recovers a logger name that a terminal cut in two
// ("… (kafka.server.Replica" + "\nManager)"), as seen in pasted logs.
func (p *Parser) unwrapLogger(first, cont []byte) []byte {
	i := bytes.LastIndex(first, []byte(" ("))
	if i < 0 || !isLoggerName(first[i+2:]) {
		return nil
	}
	next := cont
	if j := bytes.IndexByte(cont, '\n'); j >= 0 {
		next = cont[:j]
	}
	if len(next) < 2 || next[len(next)-1] != ')' || !isLoggerName(next[:len(next)-1]) {
		return nil
	}
	p.logger = append(append(p.logger[:0], first[i+2:]...), next[:len(next)-1]...)
	return p.logger
}
