package logparse

import "bytes"

// Events logged by kafka.cluster.Partition with the ident prefix
// "[Partition <topic>-<p> broker=<id>] ".

// partition parses a "[Partition …]" message.
func (p *Parser) partition(ev *Event, m []byte) bool {
	m, _ = cut(m, "[Partition ")
	body, ok := p.partitionIdent(ev, m)
	if !ok || len(body) == 0 {
		return false
	}
	switch body[0] {
	case 'H':
		return hwUpdate(ev, body)
	case 'P':
		return p.ackProgress(ev, body)
	case 'S':
		if hasPrefix(body, "Skipping update high watermark since new hw ") {
			return p.hwSkip(ev, body)
		}
		return p.isrShrink(ev, body)
	case 'R':
		return p.replicaLEO(ev, body)
	case 'N':
		return p.hwBlocked(ev, body)
	case 'L':
		return logLoaded(ev, body)
	case 'I':
		if hasPrefix(body, "Ignoring failed ISR update to ") {
			return p.changeCommittedFirst(ev, body)
		}
		return p.isrUpdate(ev, body)
	case 'E':
		return p.isrExpand(ev, body)
	case 'F':
		return p.alterFailed(ev, body)
	}
	return false
}

// maxIdentMemo bounds the remembered prefix, whatever junk is parsed.
const maxIdentMemo = 320

// partitionIdent reads "<topic>-<p> broker=<b>] " into ev and returns what
// follows. The same bytes as the last prefix give the same fields without
// scanning them.
func (p *Parser) partitionIdent(ev *Event, m []byte) ([]byte, bool) {
	last := &p.lastPart
	if n := len(last.text); n > 0 && len(m) > n+1 && m[n] == ']' && m[n+1] == ' ' && sameBytes(m[:n], last.text) {
		ev.Topic, ev.Partition, ev.Broker = last.topic, last.partition, last.broker
		return m[n+2:], true
	}
	// The topic-partition runs up to " broker=", not to the first space, so
	// that a name with a space in it is read whole and rejected as illegal.
	i := bytes.Index(m, []byte(" broker="))
	if i < 0 || !p.setTopicPartition(ev, m[:i]) {
		return nil, false
	}
	var ok bool
	rest := m[i+len(" broker="):]
	if ev.Broker, rest, ok = id(rest); !ok {
		return nil, false
	}
	body, ok := cut(rest, "] ")
	if !ok {
		return nil, false
	}
	if n := len(m) - len(rest); n <= maxIdentMemo { // Kafka topic names are ≤ 249 bytes
		last.text = append(last.text[:0], m[:n]...)
		last.topic, last.partition, last.broker = ev.Topic, ev.Partition, ev.Broker
	}
	return body, true
}

// offsetMetadata reads a LogOffsetMetadata: "(offset=88, segment=[16:76938])"
// (3.6+), "(offset=88 segment=[…])" (2.8–3.4) or "(offset=88segment=[…])"
// (3.5) — the digits after "offset=" are all that differ in meaning.
func offsetMetadata(s []byte) (int64, []byte, bool) {
	s, ok := cut(s, "(offset=")
	if !ok {
		return 0, s, false
	}
	v, rest, ok := snum(s) // an empty partition prints offset=-1
	if !ok {
		return 0, s, false
	}
	i := bytes.IndexByte(rest, ')')
	if i < 0 {
		return 0, s, false
	}
	return v, rest[i+1:], true
}

// hwUpdate reads "High watermark updated from (offset=88, …) to (offset=89, …)".
func hwUpdate(ev *Event, s []byte) bool {
	// The most frequent line of a DEBUG log: its prefix is compared in two
	// short pieces, which the compiler does without a call.
	if len(s) < 28 || string(s[:16]) != "High watermark u" || string(s[16:28]) != "pdated from " {
		return false
	}
	var ok bool
	if ev.From, s, ok = offsetMetadata(s[28:]); !ok {
		return false
	}
	if s, ok = cut(s, " to (offset="); !ok {
		return false
	}
	if ev.To, _, ok = snum(s); !ok { // what follows the offset is not needed
		return false
	}
	ev.Type = HWUpdate
	return true
}

// hwSkip reads "Skipping update high watermark since new hw (offset=88, …) is not
// larger than old value. All current LEOs are …" — From is the new hw.
func (p *Parser) hwSkip(ev *Event, s []byte) bool {
	s, _ = cut(s, "Skipping update high watermark since new hw ")
	ev.Type = HWSkip
	if p.TypeOnly {
		return true
	}
	var ok bool
	if ev.From, _, ok = offsetMetadata(s); !ok {
		return false
	}
	return true
}

// ackProgress reads "Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89),
// awaiting Set(broker 3: 88, broker 2: 88)". "awaiting Set()" = complete.
func (p *Parser) ackProgress(ev *Event, s []byte) bool {
	s, ok := cut(s, "Progress awaiting ISR acks for offset ")
	if !ok {
		return false
	}
	if ev.Offset, s, ok = num(s); !ok {
		return false
	}
	if s, ok = cut(s, ": acked: "); !ok {
		return false
	}
	body, s, ok := setBody(s)
	if !ok {
		return false
	}
	if p.TypeOnly {
		if s, ok = cut(s, ", awaiting "); !ok {
			return false
		}
		ev.AllAcked = emptySet(s)
		ev.Type = ISRAckProgress
		return true
	}
	if p.acks, ok = brokerOffsets(p.acks, body); !ok {
		return false
	}
	nAcked := len(p.acks)
	if s, ok = cut(s, ", awaiting "); !ok {
		return false
	}
	if body, _, ok = setBody(s); !ok {
		return false
	}
	if p.acks, ok = brokerOffsets(p.acks, body); !ok {
		return false
	}
	ev.Acked, ev.Awaiting = p.acks[:nAcked:nAcked], p.acks[nAcked:]
	ev.AllAcked = len(ev.Awaiting) == 0
	ev.Type = ISRAckProgress
	return true
}

// emptySet reports whether s starts with a set that setBody reads as empty
// ("Set()", "HashSet()", "[]"), looking no further than its first element.
func emptySet(s []byte) bool {
	i := 0
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z') {
		i++
	}
	switch {
	case i >= len(s) || s[i] != '(' && s[i] != '[':
		return false
	case i+1 == len(s): // unterminated: setBody reads what follows, nothing
		return true
	}
	return s[i] == '(' && s[i+1] == ')' || s[i] == '[' && s[i+1] == ']'
}

// brokerOffsets parses "broker 1: 89, broker 2: 88" into dst.
func brokerOffsets(dst []ReplicaOffset, s []byte) ([]ReplicaOffset, bool) {
	for len(s) > 0 {
		s = skipSpaces(s)
		var ok bool
		if s, ok = cut(s, "broker "); !ok {
			return dst, false
		}
		var ro ReplicaOffset
		if ro.Replica, s, ok = id(s); !ok {
			return dst, false
		}
		if s, ok = cut(s, ": "); !ok {
			return dst, false
		}
		if ro.Offset, s, ok = snum(s); !ok {
			return dst, false
		}
		dst = append(dst, ro)
		s, _ = cut(s, ",")
	}
	return dst, true
}

// replicaLEO reads "Recorded replica 1 log end offset (LEO) position 771005 and log start offset 0."
func (p *Parser) replicaLEO(ev *Event, s []byte) bool {
	s, ok := cut(s, "Recorded replica ")
	if !ok {
		return false
	}
	if p.TypeOnly {
		ev.Type = ReplicaLEO
		return true
	}
	if ev.Replica, s, ok = id(s); !ok {
		return false
	}
	if s, ok = cut(s, " log end offset (LEO) position "); !ok {
		return false
	}
	if ev.LEO, _, ok = snum(s); !ok {
		return false
	}
	ev.Type = ReplicaLEO
	return true
}

// hwBlocked reads "Not increasing HWM because partition is under min ISR(ISR=Set(1)" —
// never closed in 3.7–4.1; "(ISR=[1]" in 4.2; "(ISR=[1])" later.
func (p *Parser) hwBlocked(ev *Event, s []byte) bool {
	s, ok := cut(s, "Not increasing HWM because partition is under min ISR(ISR=")
	if !ok {
		return false
	}
	body, _, ok := setBody(s)
	if !ok {
		return false
	}
	if p.isr, _, ok = intList(p.isr, body); !ok {
		return false
	}
	ev.ISR = p.isr
	ev.Type = HWBlockedUnderMinISR
	return true
}

// logLoaded reads "Log loaded for partition t-0 with initial high watermark 17".
func logLoaded(ev *Event, s []byte) bool {
	if !hasPrefix(s, "Log loaded for partition ") {
		return false
	}
	s, ok := skipTo(s, " with initial high watermark ")
	if !ok {
		return false
	}
	if ev.HW, _, ok = snum(s); !ok {
		return false
	}
	ev.Type = LogLoaded
	return true
}

// isrShrink reads "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 100,
// endOffset: 120). Out of sync replicas: (brokerId: 3, endOffset: 90[,
// lastCaughtUpTimeMs: 1729000000000])." — endOffset may be "unknown" (3.2+).
func (p *Parser) isrShrink(ev *Event, s []byte) bool {
	s, ok := cut(s, "Shrinking ISR from ")
	if !ok {
		return false
	}
	if s, ok = p.fromToISR(ev, s); !ok {
		return false
	}
	if ev.HW, s, ok = numAfter(s, "(highWatermark: "); !ok {
		return false
	}
	if ev.LEO, s, ok = numAfter(s, "endOffset: "); !ok {
		return false
	}
	s, _ = skipTo(s, "Out of sync replicas: ")
	for {
		var ok bool
		if s, ok = skipTo(s, "(brokerId: "); !ok {
			break
		}
		var ro ReplicaOffset
		if ro.Replica, s, ok = id(s); !ok {
			return false
		}
		if s, ok = cut(s, ", endOffset: "); !ok {
			return false
		}
		if ro.Offset, s, ok = snum(s); !ok {
			ro.Offset = -1 // "unknown"
		}
		p.oos = append(p.oos, ro)
	}
	ev.OutOfSync = p.oos
	ev.Type = ISRShrink
	return true
}

// fromToISR parses "1,2,3 to 1,2" into FromISR and ToISR.
func (p *Parser) fromToISR(ev *Event, s []byte) ([]byte, bool) {
	var ok bool
	if p.fromTo, s, ok = intList(p.fromTo, s); !ok || len(p.fromTo) == 0 {
		return s, false
	}
	n := len(p.fromTo)
	if s, ok = cut(s, "to "); !ok {
		return s, false
	}
	if p.fromTo, s, ok = intList(p.fromTo, s); !ok {
		return s, false
	}
	ev.FromISR, ev.ToISR = p.fromTo[:n:n], p.fromTo[n:]
	return s, true
}

// isrExpand reads (Kafka ≤2.7) "Expanding ISR from 3 to 3,4".
func (p *Parser) isrExpand(ev *Event, s []byte) bool {
	s, ok := cut(s, "Expanding ISR from ")
	if !ok {
		return false
	}
	if _, ok = p.fromToISR(ev, s); !ok {
		return false
	}
	ev.Type = ISRExpand
	return true
}

// changeCommittedFirst reads the DEBUG line a leader prints when the ISR
// change it proposed was committed and reached it through the metadata
// before the AlterPartition answer: "Ignoring failed ISR update to
// PendingExpandIsr(newInSyncReplicaId=2, …, lastCommittedState=
// CommittedPartitionState(isr=Set(1), …)) since we have already updated state
// to CommittedPartitionState(isr=Set(1, 2), …)". No "ISR updated to" INFO line
// follows, so on KRaft brokers (seen on real 3.9.1 and 4.1.1) this is the only
// trace of many changes: an expansion becomes an isr_expand, a shrink an
// isr_shrink_committed, from the last committed ISR to the new one.
func (p *Parser) changeCommittedFirst(ev *Event, s []byte) bool {
	s, _ = cut(s, "Ignoring failed ISR update to ")
	expand := hasPrefix(s, "PendingExpandIsr(")
	if !expand && !hasPrefix(s, "PendingShrinkIsr(") {
		return false
	}
	proposal, committed, ok := bytes.Cut(s, []byte(" since we have already updated state to "))
	if !ok {
		return false
	}
	// 3.1+: the proposal names its last committed state; 2.8–3.0 print
	// "PendingExpandIsr(isr=Set(1), newInSyncReplicaId=2)", whose isr= is that state.
	if _, last, found := bytes.Cut(proposal, []byte("lastCommittedState=")); found {
		proposal = last
	}
	from, ok := isrField(proposal)
	if !ok {
		return false
	}
	to, ok := isrField(committed)
	if !ok {
		return false
	}
	if p.fromTo, _, ok = intList(p.fromTo, from); !ok || len(p.fromTo) == 0 {
		return false
	}
	n := len(p.fromTo)
	if p.fromTo, _, ok = intList(p.fromTo, to); !ok {
		return false
	}
	ev.FromISR, ev.ToISR = p.fromTo[:n:n], p.fromTo[n:]
	switch m := len(ev.ToISR); {
	case expand && m > n:
		ev.Type = ISRExpand
	case !expand && m < n && m > 0:
		ev.Type = ISRShrinkCommitted
	default:
		return false // not the change proposed after all
	}
	return true
}

// isrField returns the body of the first "isr=Set(…)" (or "isr=[…]") in s.
func isrField(s []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(s, []byte("isr="))
	if !ok {
		return nil, false
	}
	body, _, ok := setBody(rest)
	return body, ok
}

// isrUpdate reads "ISR updated to 2,1,3 and version updated to [18]" (2.8–3.0), "… to
// 18" (3.1–3.4), "2,1,3  and …" (3.5+, empty under-min-isr slot), "1
// (under-min-isr) and …"; 2.7 "ISR updated from AlterIsr to …".
func (p *Parser) isrUpdate(ev *Event, s []byte) bool {
	s, ok := cut(s, "ISR updated ")
	if !ok {
		return false
	}
	s, _ = cut(s, "from AlterIsr ")
	if s, ok = cut(s, "to "); !ok {
		return false
	}
	if p.isr, s, ok = intList(p.isr, s); !ok {
		return false
	}
	s = skipSpaces(s)
	if s, ok = cut(s, "(under-min-isr) "); ok {
		ev.UnderMinISR = true
	}
	if s, ok = cut(s, "and version updated to "); !ok {
		return false
	}
	s, _ = cut(s, "[")
	if ev.Version, _, ok = num(s); !ok {
		return false
	}
	ev.ISR = p.isr
	ev.Type = ISRUpdate
	return true
}

// alterFailed reads "Failed to update ISR to <state> …" (2.8–3.1) / "Failed to alter
// partition to <state> …" (3.2+). Reason is the controller error
// ("INELIGIBLE_REPLICA") or the why-clause ("leader epoch is old").
func (p *Parser) alterFailed(ev *Event, s []byte) bool {
	s, ok := cut(s, "Failed to ")
	if !ok {
		return false
	}
	if s, ok = cut(s, "alter partition to "); !ok {
		if s, ok = cut(s, "update ISR to "); !ok {
			return false
		}
	}
	s = skipBalanced(s)
	var reason []byte
	switch {
	case hasPrefix(s, " since the controller rejected the request with "):
		reason, _ = word(s[len(" since the controller rejected the request with "):])
		reason = trimSuffixByte(reason, '.')
	case hasPrefix(s, " due to unexpected "):
		reason = clause(s[len(" due to unexpected "):])
	case hasPrefix(s, " since "):
		reason = clause(s[len(" since "):])
	case hasPrefix(s, " because "):
		reason = clause(s[len(" because "):])
	case hasPrefix(s, " due to "):
		reason = clause(s[len(" due to "):])
	default:
		return false
	}
	reason, _ = cut(reason, "the ")
	ev.Reason = p.intern(reason)
	ev.Type = AlterPartitionFailed
	return true
}

// skipBalanced skips a toString value such as "PendingExpandIsr(… (…) …)"
// and returns what follows its closing parenthesis.
func skipBalanced(s []byte) []byte {
	depth := 0
	for i, c := range s {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return s[i+1:]
			}
		case ' ':
			if depth == 0 {
				return s[i:]
			}
		}
	}
	return nil
}

// clause returns s up to the end of its first sentence.
func clause(s []byte) []byte {
	if i := bytes.Index(s, []byte(". ")); i >= 0 {
		return s[:i]
	}
	return trimSuffixByte(s, '.')
}
