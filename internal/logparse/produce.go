package logparse

import "bytes"

// A produce rejected for min ISR. ReplicaManager logs the header at
// ERROR and the exception as a separate continuation line with no stack
// frames (ApiException.fillInStackTrace returns this):
//
//	[ReplicaManager broker=1] Error processing append operation on partition [<topicId>:]t-0
//	org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR …

const notEnoughReplicas = "org.apache.kafka.common.errors.NotEnoughReplicasException: "

// produce parses a "[ReplicaManager broker=N] …" record.
func (p *Parser) produce(ev *Event, m []byte, cont []byte) bool {
	m, _ = cut(m, "[ReplicaManager broker=")
	var ok bool
	if ev.Broker, m, ok = id(m); !ok {
		return false
	}
	if ev.Level != LevelError {
		// e.g. InvalidProducerEpochException goes through the same header at INFO
		return p.logDirStopped(ev, m) // server.go
	}
	if m, ok = cut(m, "] Error processing append operation on partition "); !ok {
		return false
	}
	tp, _ := word(m)
	if i := bytes.IndexByte(tp, ':'); i >= 0 { // 4.1+: TopicIdPartition
		if isTopicID(tp[:i]) {
			ev.TopicID = p.intern(tp[:i])
		}
		tp = tp[i+1:]
	}
	if !p.setTopicPartition(ev, tp) {
		return false
	}
	exc, after := firstNonBlankLine(cont)
	if isWrappedLoggerTail(exc) { // pasted logs: "(kafka.server.Replica" + "\nManager)"
		exc, _ = firstNonBlankLine(after)
	}
	if exc, ok = cut(exc, notEnoughReplicas); !ok {
		return false
	}
	if exc, ok = cut(exc, "The size of the current ISR "); !ok {
		return false
	}
	if rest, ok := cut(exc, ": "); ok { // 4.1+: "ISR : 1 is insufficient"
		n, _, ok := num(rest)
		if !ok {
			return false
		}
		ev.ISRSize = int(n)
	} else { // ≤4.0: "ISR Set(1) is insufficient"
		body, _, ok := setBody(exc)
		if !ok {
			return false
		}
		if p.isr, _, ok = intList(p.isr, body); !ok {
			return false
		}
		ev.ISR, ev.ISRSize = p.isr, len(p.isr)
	}
	minISR, _, ok := numAfter(exc, " min.isr requirement of ")
	if !ok {
		return false
	}
	ev.MinISR = int(minISR)
	// 4.1+ also names the live replicas. A terminal-wrapped paste can push
	// them onto the next physical line, so search the whole record.
	if ev.ISR == nil {
		if live, ok := skipTo(cont, "live replica(s) broker.id are : "); ok {
			if body, _, ok := setBody(live); ok {
				if p.isr, _, ok = intList(p.isr, body); ok {
					ev.ISR = p.isr
				}
			}
		}
	}
	ev.Type = ProduceRejectedMinISR
	return true
}

// firstNonBlankLine returns the first line of s with any non-space text:
// log4j2 ≥2.25 may print an empty line before the exception.
// It also returns the text after that line.
func firstNonBlankLine(s []byte) (line, rest []byte) {
	for len(s) > 0 {
		line = s
		if i := bytes.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, s
		}
	}
	return nil, nil
}

// isWrappedLoggerTail reports whether line is the end of a logger name that
// a terminal wrapped onto its own line ("Manager)").
func isWrappedLoggerTail(line []byte) bool {
	return len(line) > 1 && line[len(line)-1] == ')' && isLoggerName(line[:len(line)-1])
}
