package logparse

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends ev as one JSON object (no newline) to dst. Field order
// is stable and only the value fields meaningful for ev.Type are written, so
// the output doubles as golden-test text. No reflection: the `events`
// command prints every record of a large log through this.
func AppendJSON(dst []byte, ev *Event) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, ev.Type.String())
	if !ev.Time.IsZero() {
		dst = append(dst, `,"time":"`...)
		dst = ev.Time.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"level":`...)
	dst = appendString(dst, ev.Level.String())
	dst = append(dst, `,"logger":`...)
	dst = appendString(dst, ev.Logger)
	dst = appendInt(dst, "broker", int64(ev.Broker))
	dst = append(dst, `,"topic":`...)
	dst = appendString(dst, ev.Topic)
	dst = appendInt(dst, "partition", int64(ev.Partition))
	if ev.TopicID != "" {
		dst = append(dst, `,"topic_id":`...)
		dst = appendString(dst, ev.TopicID)
	}
	if ev.File != "" {
		dst = append(dst, `,"file":`...)
		dst = appendString(dst, ev.File)
	}
	dst = appendInt(dst, "line", int64(ev.Line))

	switch ev.Type {
	case HWUpdate, HWNonMonotonic:
		dst = appendInt(dst, "from", ev.From)
		dst = appendInt(dst, "to", ev.To)
	case HWSkip:
		dst = appendInt(dst, "from", ev.From)
	case ISRAckProgress:
		dst = appendInt(dst, "offset", ev.Offset)
		dst = appendOffsets(dst, "acked", ev.Acked)
		dst = appendOffsets(dst, "awaiting", ev.Awaiting)
	case ReplicaLEO:
		dst = appendInt(dst, "replica", int64(ev.Replica))
		dst = appendInt(dst, "leo", ev.LEO)
	case HWBlockedUnderMinISR:
		dst = appendInts(dst, "isr", ev.ISR)
	case LogLoaded:
		dst = appendInt(dst, "hw", ev.HW)
	case ISRShrink:
		dst = appendInts(dst, "from_isr", ev.FromISR)
		dst = appendInts(dst, "to_isr", ev.ToISR)
		dst = appendInt(dst, "hw", ev.HW)
		dst = appendInt(dst, "leo", ev.LEO)
		dst = appendOffsets(dst, "out_of_sync", ev.OutOfSync)
	case ISRExpand, ISRShrinkCommitted:
		dst = appendInts(dst, "from_isr", ev.FromISR)
		dst = appendInts(dst, "to_isr", ev.ToISR)
	case ISRUpdate:
		dst = appendInts(dst, "isr", ev.ISR)
		dst = appendInt(dst, "version", ev.Version)
		dst = appendBool(dst, "under_min_isr", ev.UnderMinISR)
	case AlterPartitionFailed:
		dst = append(dst, `,"reason":`...)
		dst = appendString(dst, ev.Reason)
	case ProduceRejectedMinISR:
		if ev.ISR != nil {
			dst = appendInts(dst, "isr", ev.ISR)
		}
		dst = appendInt(dst, "isr_size", int64(ev.ISRSize))
		dst = appendInt(dst, "min_isr", int64(ev.MinISR))
	case LeaderStart, FollowerStart:
		dst = appendInt(dst, "leader", int64(ev.Leader))
		dst = appendInt(dst, "leader_epoch", ev.LeaderEpoch)
		dst = appendInt(dst, "partition_epoch", ev.PartitionEpoch)
		dst = appendInt(dst, "start_offset", ev.StartOffset)
		dst = appendInt(dst, "hw", ev.HW)
		if ev.Type == LeaderStart {
			dst = appendInts(dst, "isr", ev.ISR)
			dst = appendBool(dst, "under_min_isr", ev.UnderMinISR)
		}
	case FetcherTruncation:
		dst = appendInt(dst, "leader", int64(ev.Leader))
		dst = appendInt(dst, "offset", ev.Offset)
		dst = append(dst, `,"reason":`...)
		dst = appendString(dst, ev.Reason)
	case LogTruncation:
		dst = appendInt(dst, "offset", ev.Offset)
		dst = appendBool(dst, "no_effect", ev.NoEffect)
		if ev.NoEffect {
			dst = appendInt(dst, "largest_offset", ev.LargestOffset)
		}
	case TruncationBelowHW:
		dst = appendInt(dst, "offset", ev.Offset)
		dst = appendInt(dst, "hw", ev.HW)
	case EpochEntry, EpochConflictTruncation:
		dst = appendInt(dst, "epoch", ev.Epoch)
		dst = appendInt(dst, "start_offset", ev.StartOffset)
	case UncleanElection:
		dst = appendInt(dst, "leader", int64(ev.Leader))
		dst = appendInt(dst, "partition_epoch", ev.PartitionEpoch)
	case ELRElection:
		dst = appendInt(dst, "leader", int64(ev.Leader))
	case PartitionStateChange:
		dst = append(dst, `,"from_state":`...)
		dst = appendString(dst, ev.Reason)
		dst = appendInt(dst, "leader", int64(ev.Leader))
		dst = appendInt(dst, "leader_epoch", ev.LeaderEpoch)
		dst = appendInt(dst, "partition_epoch", ev.PartitionEpoch)
		dst = appendInts(dst, "isr", ev.ISR)
		if ev.HasRecoveryState {
			dst = appendBool(dst, "recovering", ev.Recovering)
		}
	case LogDirOffline:
		dst = append(dst, `,"dir":`...)
		dst = appendString(dst, ev.Dir)
	case QuorumTransition, QuorumLeaderChange:
		if ev.State != "" {
			dst = append(dst, `,"state":`...)
			dst = appendString(dst, ev.State)
		}
		dst = appendInt(dst, "epoch", ev.Epoch)
		dst = appendInt(dst, "leader", int64(ev.Leader))
	case QuorumHWRegression:
		dst = appendInt(dst, "from", ev.From)
		dst = appendInt(dst, "to", ev.To)
	case QuorumTruncation:
		dst = appendInt(dst, "offset", ev.Offset)
		dst = appendInt(dst, "leader", int64(ev.Leader))
	case BrokerFenced:
		dst = appendInt(dst, "replica", int64(ev.Replica))
		if ev.Epoch >= 0 {
			dst = appendInt(dst, "epoch", ev.Epoch)
		}
	}
	return append(dst, '}')
}

func appendInt(dst []byte, key string, v int64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

func appendBool(dst []byte, key string, v bool) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendBool(dst, v)
}

func appendInts(dst []byte, key string, vs []int32) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, `":[`...)
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(v), 10)
	}
	return append(dst, ']')
}

func appendOffsets(dst []byte, key string, vs []ReplicaOffset) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, `":[`...)
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"replica":`...)
		dst = strconv.AppendInt(dst, int64(v.Replica), 10)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, v.Offset, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Topic names come from untrusted
// log text, so control bytes and invalid UTF-8 are escaped/replaced.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
