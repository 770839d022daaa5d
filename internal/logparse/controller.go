package logparse

import "bytes"

// KRaft controller lines, in server.log (3.0–3.3) or
// controller.log (3.4+). They appear on every controller, active and
// standby, because each replays the metadata log: consumers deduplicate.

// controller parses a "[QuorumController id=N] …" / "[Controller N] …"
// message, or one printed without a prefix (PartitionChangeBuilder).
func (p *Parser) controller(ev *Event, m []byte) bool {
	body := m
	if rest, ok := cut(m, "[QuorumController id="); ok {
		body = rest
	} else if rest, ok := cut(m, "[Controller id="); ok {
		return p.zkController(ev, rest)
	} else if rest, ok := cut(m, "[Controller "); ok {
		body = rest
	}
	if len(body) != len(m) {
		var ok bool
		if ev.Broker, body, ok = id(body); !ok {
			return false
		}
		if body, ok = cut(body, "] "); !ok {
			return false
		}
	}
	switch {
	case hasPrefix(body, "UNCLEAN partition change for "):
		return p.uncleanChange(ev, body[len("UNCLEAN partition change for "):])
	case hasPrefix(body, "Setting new leader for topicId "):
		return p.newLeader(ev, body[len("Setting new leader for topicId "):])
	case hasPrefix(body, "Fencing broker "):
		return fenced(ev, body[len("Fencing broker "):])
	case ev.Broker >= 0 && len(body) != len(m):
		return quorumLeader(ev, body)
	}
	return false
}

// "t-0 with topic ID <uuid>: isr: [1] -> [2], leader: 1 -> 2, …,
// partitionEpoch: 5 -> 6" (PartitionRegistration diff).
func (p *Parser) uncleanChange(ev *Event, s []byte) bool {
	tp, s := word(s)
	s, ok := cut(s, " with topic ID ")
	if !ok || !p.setTopicPartition(ev, tp) {
		return false
	}
	uuid := trimAt(s, ':')
	if isTopicID(uuid) {
		ev.TopicID = p.intern(uuid)
	}
	diff := s[len(uuid):]
	if v, ok := diffTo(diff, "leader: "); ok {
		ev.Leader = int32(v)
	}
	if v, ok := diffTo(diff, "partitionEpoch: "); ok {
		ev.PartitionEpoch = v
	}
	ev.Type = UncleanElection
	return true
}

// diffTo finds "<key>a -> b" in a PartitionRegistration diff and returns b.
func diffTo(diff []byte, key string) (int64, bool) {
	for {
		i := index(diff, key)
		if i < 0 {
			return 0, false
		}
		// The key must start a field: "leader: " is also the tail of
		// "lastKnownLeader: " style names.
		if i == 0 || diff[i-1] == ' ' {
			s := diff[i+len(key):]
			if _, rest, ok := snum(s); ok {
				if rest, ok = cut(rest, " -> "); ok {
					v, _, ok := snum(rest)
					return v, ok
				}
			}
		}
		diff = diff[i+len(key):]
	}
}

// "<uuid>, partition N to L using an unclean election[. Previous partition:
// …]" (3.2+) or "… using ELR[…]" (3.7+). The line names no topic: Topic is
// left empty, TopicID and Partition are set. Clean elections are not ours.
func (p *Parser) newLeader(ev *Event, s []byte) bool {
	uuid := trimAt(s, ',')
	s, ok := cut(s[len(uuid):], ", partition ")
	if !ok || !isTopicID(uuid) {
		return false
	}
	if ev.Partition, s, ok = id(s); !ok {
		return false
	}
	if s, ok = cut(s, " to "); !ok {
		return false
	}
	if ev.Leader, s, ok = id(s); !ok {
		return false
	}
	switch {
	case hasPrefix(s, " using an unclean election"):
		ev.Type = UncleanElection
	case hasPrefix(s, " using ELR"):
		ev.Type = ELRElection
	default:
		return false
	}
	ev.TopicID = p.intern(uuid)
	return true
}

// "N because its session has timed out." (3.x) or "N at epoch E because …"
// (4.1+). The fenced broker is in Replica, its broker epoch in Epoch.
func fenced(ev *Event, s []byte) bool {
	var ok bool
	if ev.Replica, s, ok = id(s); !ok {
		return false
	}
	if rest, ok := cut(s, " at epoch "); ok {
		if ev.Epoch, s, ok = snum(rest); !ok {
			return false
		}
	}
	if !hasPrefix(s, " because its session has timed out") {
		return false
	}
	ev.Type = BrokerFenced
	return true
}

// trimAt returns s up to (not including) the first c, or all of s.
func trimAt(s []byte, c byte) []byte {
	if i := bytes.IndexByte(s, c); i >= 0 {
		return s[:i]
	}
	return s
}
