package logparse

import "bytes"

// Follower truncation and HW regressions the
// ReplicaFetcherThread decision, the log's own truncation, and the leader
// epoch cache.

// Fetcher truncation reasons (Event.Reason).
const (
	ReasonHighWatermark     = "high_watermark"      // truncated to the local HW (no epoch info, or HW path)
	ReasonLeaderEpoch       = "leader_epoch"        // truncated by the leader's epoch end offset
	ReasonLeaderEndOffset   = "leader_end_offset"   // WARN "Reset fetch offset … to current leader's latest offset"
	ReasonLeaderStartOffset = "leader_start_offset" // WARN "… to current leader's start offset" / "Truncate fully …"
)

// fetcher parses "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] …".
func (p *Parser) fetcher(ev *Event, m []byte) bool {
	m, _ = cut(m, "[ReplicaFetcher replicaId=")
	var ok bool
	if ev.Broker, m, ok = id(m); !ok {
		return false
	}
	if m, ok = cut(m, ", leaderId="); !ok {
		return false
	}
	if ev.Leader, m, ok = id(m); !ok {
		return false
	}
	body, ok := skipTo(m, "] ")
	if !ok {
		return false
	}
	switch {
	case hasPrefix(body, "Truncating partition "):
		return p.fetcherTruncation(ev, body[len("Truncating partition "):])
	case hasPrefix(body, "Truncating "):
		return p.truncationBelowHW(ev, body[len("Truncating "):])
	case hasPrefix(body, "Reset fetch offset for partition "):
		return p.resetFetchOffset(ev, body[len("Reset fetch offset for partition "):])
	case hasPrefix(body, "Truncate fully and reset fetch offset for partition "):
		return p.resetFetchOffset(ev, body[len("Truncate fully and reset fetch offset for partition "):])
	}
	return false
}

// fetcherTruncation reads what follows "Truncating partition ": "t-0 to local high watermark N" (2.8–3.0) or "t-0 with
// TruncationState(offset=N, completed=true) due to local high watermark M" /
// "… due to leader epoch and offset EpochEndOffset(…)" (3.1+).
func (p *Parser) fetcherTruncation(ev *Event, s []byte) bool {
	tp, s := word(s)
	if !p.setTopicPartition(ev, tp) {
		return false
	}
	var ok bool
	if rest, old := cut(s, " to local high watermark "); old {
		if ev.Offset, _, ok = snum(rest); !ok {
			return false
		}
		ev.Reason = ReasonHighWatermark
	} else {
		if s, ok = cut(s, " with TruncationState(offset="); !ok {
			return false
		}
		if ev.Offset, s, ok = snum(s); !ok {
			return false
		}
		if s, ok = skipTo(s, ") due to "); !ok {
			return false
		}
		switch {
		case hasPrefix(s, "local high watermark"):
			ev.Reason = ReasonHighWatermark
		case hasPrefix(s, "leader epoch"):
			ev.Reason = ReasonLeaderEpoch
		default:
			return false
		}
	}
	ev.Type = FetcherTruncation
	return true
}

// WARN "t-0 from 120 to current leader's latest offset 100" (a truncation),
// "… to current leader's start offset 500" (2.8–3.5), and 3.6+ "Truncate
// fully and reset fetch offset for partition t-0 from 120 to the current
// leader's start offset 500 because …". The INFO "… to the current local
// replica's end offset" is not a truncation and is not ours.
func (p *Parser) resetFetchOffset(ev *Event, s []byte) bool {
	tp, s := word(s)
	if !p.setTopicPartition(ev, tp) {
		return false
	}
	s, ok := cut(s, " from ")
	if !ok {
		return false
	}
	if _, s, ok = snum(s); !ok {
		return false
	}
	s, _ = cut(s, " to ")
	s, _ = cut(s, "the ")
	switch {
	case hasPrefix(s, "current leader's latest offset "):
		ev.Reason, s = ReasonLeaderEndOffset, s[len("current leader's latest offset "):]
	case hasPrefix(s, "current leader's start offset "):
		ev.Reason, s = ReasonLeaderStartOffset, s[len("current leader's start offset "):]
	default:
		return false
	}
	if ev.Offset, _, ok = snum(s); !ok {
		return false
	}
	ev.Type = FetcherTruncation
	return true
}

// truncationBelowHW reads "[future ]t-0 to offset 5117 below high watermark 5120" (fetcher
// ≤4.1, UnifiedLog 4.2+).
func (p *Parser) truncationBelowHW(ev *Event, s []byte) bool {
	s, _ = cut(s, "future ")
	tp, s := word(s)
	s, ok := cut(s, " to offset ")
	if !ok || !p.setTopicPartition(ev, tp) {
		return false
	}
	if ev.Offset, s, ok = snum(s); !ok {
		return false
	}
	if s, ok = cut(s, " below high watermark "); !ok {
		return false
	}
	if ev.HW, _, ok = snum(s); !ok {
		return false
	}
	ev.Type = TruncationBelowHW
	return true
}

// unifiedLog parses "[UnifiedLog partition=t-0, dir=/d] …" (also "[Log …]"
// 2.8–3.0 and Confluent's "[MergedLog …]").
func (p *Parser) unifiedLog(ev *Event, m []byte) bool {
	m, ok := skipTo(m, " partition=")
	if !ok {
		return false
	}
	// The name runs to the ", dir=" that follows it: a space inside it is
	// part of an illegal name, which setTopicPartition rejects.
	end := 0
	for end < len(m) && m[end] != ',' && m[end] != ']' {
		end++
	}
	if !p.setTopicPartition(ev, m[:end]) {
		return false
	}
	body, ok := skipTo(m[end:], "] ")
	if !ok {
		return false
	}
	switch {
	case hasPrefix(body, "Truncating to offset "):
		if ev.Offset, ok = numAll(body[len("Truncating to offset "):]); !ok {
			return false
		}
		ev.Type = LogTruncation
		return true
	case hasPrefix(body, "Truncating to "):
		// "Truncating to 6 has no effect as the largest offset in the log is 5"
		s := body[len("Truncating to "):]
		if ev.Offset, s, ok = snum(s); !ok {
			return false
		}
		if s, ok = cut(s, " has no effect as the largest offset in the log is "); !ok {
			return false
		}
		if ev.LargestOffset, ok = numAll(s); !ok {
			return false
		}
		ev.NoEffect = true
		ev.Type = LogTruncation
		return true
	case hasPrefix(body, "Truncating "):
		return p.truncationBelowHW(ev, body[len("Truncating "):])
	case hasPrefix(body, "Non-monotonic update of high watermark from "):
		s := body[len("Non-monotonic update of high watermark from "):]
		if ev.From, s, ok = offsetMetadata(s); !ok {
			return false
		}
		if s, ok = cut(s, " to "); !ok {
			return false
		}
		if ev.To, _, ok = offsetMetadata(s); !ok {
			return false
		}
		ev.Type = HWNonMonotonic
		return true
	}
	return false
}

// epochCache parses "[LeaderEpochCache t-0] Appended new epoch entry
// EpochEntry(epoch=6, startOffset=1234). …" (DEBUG) and "… New epoch entry
// EpochEntry(…) caused truncation of conflicting entries …" (WARN:
// divergence).
func (p *Parser) epochCache(ev *Event, m []byte) bool {
	m, _ = cut(m, "[LeaderEpochCache ")
	end := bytes.IndexByte(m, ']')
	if end < 0 {
		return false
	}
	if !p.setTopicPartition(ev, m[:end]) {
		return false
	}
	s, ok := cut(m[end:], "] ")
	if !ok {
		return false
	}
	if rest, ok := cut(s, "Appended new epoch entry "); ok {
		s, ev.Type = rest, EpochEntry
	} else if rest, ok := cut(s, "New epoch entry "); ok && bytes.Contains(rest, []byte(" caused truncation of conflicting entries ")) {
		s, ev.Type = rest, EpochConflictTruncation
	} else {
		return false
	}
	if s, ok = cut(s, "EpochEntry(epoch="); !ok {
		return false
	}
	if ev.Epoch, s, ok = snum(s); !ok {
		return false
	}
	if s, ok = cut(s, ", startOffset="); !ok {
		return false
	}
	if ev.StartOffset, _, ok = snum(s); !ok {
		return false
	}
	return true
}
