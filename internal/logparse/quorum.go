package logparse

import "bytes"

// The KRaft metadata log as its Raft client logs it, in server.log of every
// node (controllers and brokers: org.apache.kafka.raft goes to the root
// logger), all at INFO, so on by default; the texts are the same in 3.9.1,
// 4.1.1 and 4.4.0 but for the state names, the fetch-timeout line and the
// voters the majority-lost line ends with (3.9.1 prints a stream object):
//
//	INFO [RaftManager id=103] Completed transition to Leader(localVoterNode=…, epoch=2, epochStartOffset=31, …) from CandidateState(…) (…QuorumState)
//	INFO [RaftManager id=101] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=2, leader=103, …) from UnattachedState(…) (…)
//	INFO [RaftManager id=101] Transitioning to Prospective state due to fetch timeout (org.apache.kafka.raft.KafkaRaftClient)   (4.x, KIP-996)
//	INFO [RaftManager id=101] Become candidate due to fetch timeout (org.apache.kafka.raft.KafkaRaftClient)                     (3.x)
//	INFO [RaftManager id=102] Did not receive fetch request from the majority of the voters within 3000ms. Current fetched voters are [], …
//	INFO [RaftManager id=102] The latest computed high watermark 41 is smaller than the current value 57, which should only happen when …
//	INFO [RaftManager id=102] Truncated to offset 57 from Fetch response from leader 103 (org.apache.kafka.raft.KafkaRaftClient)
//
// and, in controller.log, the controller's view of the quorum's leader:
//
//	INFO [QuorumController id=103] Becoming the active controller at epoch 2, next write offset 31.
//	INFO [QuorumController id=101] In the new epoch 2, the leader is 103.          ("(none)" while the election runs)
//	WARN [QuorumController id=102] Renouncing the leadership due to a metadata log event. We were the leader at epoch 1, but in the new epoch 2, …
//
// Not ours: "Attempting durable transition to …" (the same transition, before
// it is written), "Fully truncated the log at … after downloading snapshot"
// (a follower replacing its log by the leader's snapshot, not a divergence),
// and "… Renouncing leadership and reverting to the last committed offset"
// of a failed controller event (a leadership already lost, logged by the
// Raft client as a transition).

// QuorumStates are the Raft states a quorum_transition names, in the order
// of the metric label values: 3.9's Unattached and ≤3.8's Voted (an
// unattached voter that has voted) included.
var QuorumStates = []string{"leader", "follower", "candidate", "prospective", "unattached", "resigned", "voted"}

// quorumStateNames maps the toString names of the Raft states to QuorumStates.
var quorumStateNames = map[string]string{
	"Leader": "leader", "FollowerState": "follower", "CandidateState": "candidate", "ProspectiveState": "prospective",
	"Unattached": "unattached", "UnattachedState": "unattached", "ResignedState": "resigned", "Voted": "voted", "VotedState": "voted",
}

const (
	raftPrefix        = "[RaftManager id="
	completedTo       = "Completed transition to "
	computedHW        = "The latest computed high watermark "
	smallerThan       = " is smaller than the current value "
	truncatedTo       = "Truncated to offset "
	truncatedFrom     = " from Fetch response from leader "
	majorityLost      = "Did not receive fetch request from the majority of the voters within "
	prospectiveByTime = "Transitioning to Prospective state due to fetch timeout"
	candidateByTime   = "Become candidate due to fetch timeout"
)

// raft parses a "[RaftManager id=N] …" message.
func (p *Parser) raft(ev *Event, m []byte) bool {
	var ok bool
	if ev.Broker, m, ok = id(m[len(raftPrefix):]); !ok {
		return false
	}
	if m, ok = cut(m, "] "); !ok {
		return false
	}
	switch {
	case hasPrefix(m, completedTo):
		return raftTransition(ev, m[len(completedTo):])
	case string(m) == prospectiveByTime || string(m) == candidateByTime:
		ev.Type = QuorumFetchTimeout
	case hasPrefix(m, majorityLost):
		if _, rest, ok := num(m[len(majorityLost):]); !ok || !hasPrefix(rest, "ms.") {
			return false
		}
		ev.Type = QuorumMajorityLost
	case hasPrefix(m, computedHW):
		if ev.To, m, ok = num(m[len(computedHW):]); !ok {
			return false
		}
		if m, ok = cut(m, smallerThan); !ok {
			return false
		}
		if ev.From, _, ok = num(m); !ok || ev.To >= ev.From {
			return false
		}
		ev.Type = QuorumHWRegression
	case hasPrefix(m, truncatedTo):
		if ev.Offset, m, ok = num(m[len(truncatedTo):]); !ok {
			return false
		}
		if m, ok = cut(m, truncatedFrom); !ok {
			return false
		}
		if ev.Leader, m, ok = id(m); !ok || len(m) != 0 {
			return false
		}
		ev.Type = QuorumTruncation
	default:
		return false
	}
	return true
}

// raftTransition parses "<State>(…epoch=E…) from <State>(…)": the state
// entered, its epoch and, where it names one, the leader.
func raftTransition(ev *Event, s []byte) bool {
	i := bytes.IndexByte(s, '(')
	if i < 0 {
		return false
	}
	state, ok := quorumStateNames[string(s[:i])]
	if !ok {
		return false
	}
	// The state entered ends where the state left begins: its fields are
	// read only up to there.
	body := s[i+1:]
	if j := bytes.Index(body, []byte(") from ")); j >= 0 {
		body = body[:j]
	}
	if ev.Epoch, ok = field(body, "epoch="); !ok {
		return false
	}
	switch state {
	case "leader":
		ev.Leader = ev.Broker
	case "follower":
		v, ok := field(body, "leader=")
		if !ok {
			return false
		}
		ev.Leader = int32(v)
	case "prospective", "unattached":
		// 4.x: "leaderId=OptionalInt[103]" or "leaderId=OptionalInt.empty".
		if rest, ok := skipField(body, "leaderId=OptionalInt["); ok {
			if v, _, ok := id(rest); ok {
				ev.Leader = v
			}
		}
	}
	ev.State = state
	ev.Type = QuorumTransition
	return true
}

// field finds "<key>N" at the start of a field of a toString body (after
// '(', ' ' or ',') and parses N.
func field(body []byte, key string) (int64, bool) {
	rest, ok := skipField(body, key)
	if !ok {
		return 0, false
	}
	v, _, ok := snum(rest)
	return v, ok && v <= 1<<31-1
}

// skipField returns what follows the first "<key>" that starts a field.
func skipField(body []byte, key string) ([]byte, bool) {
	for off := 0; ; {
		i := index(body[off:], key)
		if i < 0 {
			return nil, false
		}
		at := off + i
		if at == 0 || body[at-1] == ' ' || body[at-1] == ',' || body[at-1] == '(' {
			return body[at+len(key):], true
		}
		off = at + len(key)
	}
}

const (
	becomingActive = "Becoming the active controller at epoch "
	inNewEpoch     = "In the new epoch "
	renouncing     = "Renouncing the leadership due to a metadata log event. We were the leader at epoch "
)

// quorumLeader parses QuorumController's lines about the metadata log's
// leader (the body after "[QuorumController id=N] ").
func quorumLeader(ev *Event, body []byte) bool {
	var ok bool
	switch {
	case hasPrefix(body, becomingActive):
		if ev.Epoch, body, ok = num(body[len(becomingActive):]); !ok || !hasPrefix(body, ", next write offset ") {
			return false
		}
		ev.Leader, ev.State = ev.Broker, "active"
	case hasPrefix(body, inNewEpoch):
		if ev.Epoch, body, ok = num(body[len(inNewEpoch):]); !ok {
			return false
		}
		if ev.Leader, ok = leaderIs(body); !ok {
			return false
		}
	case hasPrefix(body, renouncing):
		if _, body, ok = num(body[len(renouncing):]); !ok {
			return false
		}
		if body, ok = cut(body, ", but in the new epoch "); !ok {
			return false
		}
		if ev.Epoch, body, ok = num(body); !ok {
			return false
		}
		if ev.Leader, ok = leaderIs(body); !ok {
			return false
		}
		ev.State = "renounced"
	default:
		return false
	}
	ev.Type = QuorumLeaderChange
	return true
}

// leaderIs parses ", the leader is N." or ", the leader is (none)." (-1).
func leaderIs(s []byte) (int32, bool) {
	s, ok := cut(s, ", the leader is ")
	if !ok {
		return 0, false
	}
	if hasPrefix(s, "(none).") {
		return -1, true
	}
	v, rest, ok := id(s)
	if !ok || !hasPrefix(rest, ".") {
		return 0, false
	}
	return v, true
}
