package logparse

// Events of the "state.change.logger" (state-change.log), ident prefix
// "[Broker id=<id>] ".

// stateChange parses a "[Broker id=N] …" message.
func (p *Parser) stateChange(ev *Event, m []byte) bool {
	m, _ = cut(m, "[Broker id=")
	var ok bool
	if ev.Broker, m, ok = id(m); !ok {
		return false
	}
	body, ok := cut(m, "] ")
	if !ok || len(body) == 0 {
		return false
	}
	switch body[0] {
	case 'L':
		return p.leaderStart(ev, body)
	case 'F':
		return p.followerStart(ev, body)
	case 'T':
		return p.recovering(ev, body)
	}
	return false
}

// topicIDOption reads "Some(<uuid>)" or "None" (Scala Option[Uuid]).
func (p *Parser) topicIDOption(ev *Event, s []byte) ([]byte, bool) {
	if rest, ok := cut(s, "None"); ok {
		return rest, true
	}
	s, ok := cut(s, "Some(")
	if !ok || len(s) < 23 || s[22] != ')' || !isTopicID(s[:22]) {
		return s, false
	}
	ev.TopicID = p.intern(s[:22])
	return s[23:], true
}

// transitionStart reads the shared head of the leader and follower lines:
// "<tp>[ with topic id Some(…)] starts at leader epoch E from offset O".
func (p *Parser) transitionStart(ev *Event, s []byte) ([]byte, bool) {
	tp, s := word(s)
	if !p.setTopicPartition(ev, tp) {
		return s, false
	}
	var ok bool
	if rest, withID := cut(s, " with topic id "); withID {
		if s, ok = p.topicIDOption(ev, rest); !ok {
			return s, false
		}
	}
	if s, ok = cut(s, " starts at leader epoch "); !ok {
		return s, false
	}
	if ev.LeaderEpoch, s, ok = num(s); !ok {
		return s, false
	}
	if s, ok = cut(s, " from offset "); !ok {
		return s, false
	}
	ev.StartOffset, s, ok = snum(s)
	return s, ok
}

// epochAndHW parses what the leader and follower lines share after the start
// offset: 3.3+ " with partition epoch N<sep>HW" (sep ", high watermark " for
// leaders, " and high watermark " for followers) or 2.8–3.2 " with high
// watermark HW".
func epochAndHW(ev *Event, s []byte, sep string) ([]byte, bool) {
	ok := false
	if rest, newForm := cut(s, " with partition epoch "); newForm {
		if ev.PartitionEpoch, s, ok = num(rest); !ok {
			return s, false
		}
		if s, ok = cut(s, sep); !ok {
			return s, false
		}
	} else if s, ok = cut(s, " with high watermark "); !ok {
		return s, false
	}
	ev.HW, s, ok = snum(s)
	return s, ok
}

// leaderStart reads "Leader t-0 starts at leader epoch 5 from offset 100 with high
// watermark 90 ISR [1,2,3] addingReplicas [] removingReplicas []. …"
// (2.8–3.2), and 3.3+ "Leader t-0 with topic id Some(…) starts at leader
// epoch 4 from offset 1200 with partition epoch 9, high watermark 1200, ISR
// [2,1,3], adding replicas [] and removing replicas [][ (under-min-isr)]. …".
func (p *Parser) leaderStart(ev *Event, s []byte) bool {
	s, ok := cut(s, "Leader ")
	if !ok {
		return false
	}
	if s, ok = p.transitionStart(ev, s); !ok {
		return false
	}
	if s, ok = epochAndHW(ev, s, ", high watermark "); !ok {
		return false
	}
	s, _ = cut(s, ",") // 3.3+: "high watermark 1200, ISR […]"
	if s, ok = cut(s, " ISR "); !ok {
		return false
	}
	body, s, ok := setBody(s)
	if !ok {
		return false
	}
	if p.isr, _, ok = intList(p.isr, body); !ok {
		return false
	}
	if _, ok = skipTo(s, "(under-min-isr)"); ok {
		ev.UnderMinISR = true
	}
	ev.ISR = p.isr
	ev.Leader = ev.Broker
	ev.Type = LeaderStart
	return true
}

// followerStart reads "Follower t-0 starts at leader epoch 5 from offset 100 with high
// watermark 90. …" (2.8–3.2), and 3.3+ "… with partition epoch 9 and high
// watermark 1200. Current leader is 2. …".
func (p *Parser) followerStart(ev *Event, s []byte) bool {
	s, ok := cut(s, "Follower ")
	if !ok {
		return false
	}
	if s, ok = p.transitionStart(ev, s); !ok {
		return false
	}
	if s, ok = epochAndHW(ev, s, " and high watermark "); !ok {
		return false
	}
	if rest, ok := cut(s, ". Current leader is "); ok {
		if ev.Leader, _, ok = id(rest); !ok {
			return false
		}
	}
	ev.Type = FollowerStart
	return true
}

// recovering reads "The topic partition t-0 was marked as RECOVERING. Marking the topic
// partition as RECOVERED." (3.2+, after an unclean election).
func (p *Parser) recovering(ev *Event, s []byte) bool {
	s, ok := cut(s, "The topic partition ")
	if !ok {
		return false
	}
	tp, s := word(s)
	if !hasPrefix(s, " was marked as RECOVERING") || !p.setTopicPartition(ev, tp) {
		return false
	}
	ev.Type = LeaderRecovering
	return true
}

// ZooKeeper-mode controller lines (Kafka ≤ 3.9), ident prefix
// "[Controller id=N epoch=E] ", in the controller's state-change.log. An
// unclean election writes no line of its own at INFO: it is a change from
// OfflinePartition to OnlinePartition whose leader was not in the ISR (3.2+
// also marks it leaderRecoveryState=RECOVERING). invariant.Checker decides.

// zkController parses what follows "[Controller id=".
func (p *Parser) zkController(ev *Event, m []byte) bool {
	var ok bool
	if ev.Broker, m, ok = id(m); !ok {
		return false
	}
	body, ok := skipTo(m, "] ")
	if !ok {
		return false
	}
	switch {
	case hasPrefix(body, "Changed partition "):
		return p.zkOnline(ev, body[len("Changed partition "):])
	case hasPrefix(body, "Partition "):
		return p.zkISRChange(ev, body[len("Partition "):])
	}
	return false
}

// zkOnline reads "t-0 from OfflinePartition to OnlinePartition with state
// LeaderAndIsr(leader=2, leaderEpoch=3, isr=List(2), zkVersion=4)" (2.8–3.1),
// "… isr=List(2), leaderRecoveryState=RECOVERING, partitionEpoch=4)" (3.2–3.5)
// and "… isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1)),
// leaderRecoveryState=RECOVERING, partitionEpoch=4)" (3.6+).
func (p *Parser) zkOnline(ev *Event, s []byte) bool {
	tp, s := word(s)
	s, ok := cut(s, " from ")
	if !ok || !p.setTopicPartition(ev, tp) {
		return false
	}
	from, s := word(s)
	if s, ok = cut(s, " to OnlinePartition with state LeaderAndIsr("); !ok {
		return false
	}
	ev.Reason = p.intern(from)
	if ev.Leader, _, ok = idAfter(s, "leader="); !ok {
		return false
	}
	ev.LeaderEpoch, _, _ = numAfter(s, "leaderEpoch=")
	if rest, withEpochs := skipTo(s, "isrWithBrokerEpoch=List("); withEpochs {
		end, _ := skipTo(rest, "), leaderRecoveryState=") // the list's end; nested parentheses
		for list := rest[:len(rest)-len(end)]; ; {
			var b int32
			if b, list, ok = idAfter(list, "brokerId="); !ok {
				break
			}
			p.isr = append(p.isr, b)
		}
	} else if rest, ok := skipTo(s, "isr="); ok {
		body, _, ok := setBody(rest)
		if !ok {
			return false
		}
		if p.isr, _, ok = intList(p.isr, body); !ok {
			return false
		}
	} else {
		return false
	}
	ev.ISR = p.isr
	if rest, ok := skipTo(s, "leaderRecoveryState="); ok {
		ev.HasRecoveryState = true
		ev.Recovering = hasPrefix(rest, "RECOVERING")
	}
	if v, _, ok := numAfter(s, "partitionEpoch="); ok {
		ev.PartitionEpoch = v
	} else if v, _, ok := numAfter(s, "zkVersion="); ok {
		ev.PartitionEpoch = v
	}
	ev.Type = PartitionStateChange
	return true
}

// zkISRChange reads "t-0 state changed to (Leader:3,ISR:3,LeaderRecoveryState:RECOVERED,
// LeaderEpoch:2,ZkVersion:2,ControllerEpoch:1) after removing replica 2 from the ISR as part
// of transition to OfflineReplica": the controller's own ISR change (no LeaderRecoveryState
// before 3.2).
func (p *Parser) zkISRChange(ev *Event, s []byte) bool {
	tp, s := word(s)
	s, ok := cut(s, " state changed to (Leader:")
	if !ok || !p.setTopicPartition(ev, tp) {
		return false
	}
	if ev.Leader, s, ok = id(s); !ok {
		return false
	}
	if s, ok = cut(s, ",ISR:"); !ok {
		return false
	}
	if p.isr, s, ok = intList(p.isr, s); !ok {
		return false
	}
	ev.ISR = p.isr
	ev.LeaderEpoch, _, _ = numAfter(s, "LeaderEpoch:")
	if v, _, ok := numAfter(s, "ZkVersion:"); ok {
		ev.PartitionEpoch = v
	}
	if rest, ok := skipTo(s, "LeaderRecoveryState:"); ok {
		ev.HasRecoveryState = true
		ev.Recovering = hasPrefix(rest, "RECOVERING")
	}
	ev.Type = PartitionStateChange
	return true
}

// idAfter finds key in s and parses the broker id that follows it.
func idAfter(s []byte, key string) (int32, []byte, bool) {
	rest, ok := skipTo(s, key)
	if !ok {
		return 0, s, false
	}
	return id(rest)
}
