package poller

import "log/slog"

// Part of the last stage: each exported topic's min.insync.replicas, from
// DescribeConfigs, the broker's default, or the last value read; what is
// unknown is counted and said once per change.

// topicMinISR is a topic's min ISR as the builder resolved it.
type topicMinISR struct {
	value    int // 0 = unknown
	source   MinISRSource
	unusable Unusable // why the topic's own answer was unusable, unless source is MinISRSourceTopic
}

// minISRState is the builder's memory of the topics' min ISR.
type minISRState struct {
	topics map[string]topicMinISR // the exported topics of the last refresh only
	status MinISRStatus
	logger *slog.Logger
}

// maxNamed bounds the topics a WARN names.
const maxNamed = 5

// resolve sets the min ISR of every topic of the plan from this refresh's
// answer, and forgets topics the plan no longer has. When DescribeConfigs
// failed as a whole, the value last read stands.
func (m *minISRState) resolve(topics []string, got *minISRReadings) {
	next := make(map[string]topicMinISR, len(topics))
	var (
		unknown, byDefault [NumUnusable]int
		named              [NumUnusable][]string
	)
	for _, t := range topics {
		var r topicMinISR
		switch v, ok := got.values[t]; {
		case ok:
			r = topicMinISR{value: v, source: MinISRSourceTopic}
		case !got.ok:
			r = m.topics[t]
			if r.source == MinISRSourceNone {
				r.unusable = UnusableRequestFailed
			}
		default:
			r.unusable = got.unusable[t]
			m.status.AnswerErrors[r.unusable]++
			if got.brokerDefault > 0 {
				r.value, r.source = got.brokerDefault, MinISRSourceBrokerDefault
			}
		}
		next[t] = r
		switch r.source {
		case MinISRSourceNone:
			unknown[r.unusable]++
			if len(named[r.unusable]) < maxNamed {
				named[r.unusable] = append(named[r.unusable], t)
			}
		case MinISRSourceBrokerDefault:
			byDefault[r.unusable]++
		}
	}
	m.topics = next
	m.say(unknown, byDefault, named, got)
	m.status.Unknown, m.status.BrokerDefault = unknown, byDefault
}

// say logs a change of the unknown and broker-default counts, once.
func (m *minISRState) say(unknown, byDefault [NumUnusable]int, named [NumUnusable][]string, got *minISRReadings) {
	if unknown != m.status.Unknown {
		total := 0
		for u, n := range unknown {
			if n > 0 {
				total += n
				m.logger.Warn("Cannot read min.insync.replicas: KafkaPartitionUnderMinISR and KafkaPartitionAtMinISR are blind for these topics",
					"topics", n, "reason", Unusable(u).String(), "examples", named[u],
					"broker_default_unreadable", got.brokerErr.String())
			}
		}
		if total == 0 {
			m.logger.Info("min.insync.replicas is known again for every exported topic")
		}
	}
	if byDefault != m.status.BrokerDefault {
		for u, n := range byDefault {
			if n > 0 {
				m.logger.Warn("Cannot read min.insync.replicas of some topics; using the broker's default for them",
					"topics", n, "reason", Unusable(u).String(), "broker_default", got.brokerDefault)
			}
		}
	}
}

// minISROf returns a topic's resolved min ISR.
func (m *minISRState) minISROf(topic string) topicMinISR { return m.topics[topic] }

// pruneOpen forgets the open disagreements of partitions this refresh did
// not export, so that deleted topics do not stay in the join's memory.
func (j *sourceJoin) pruneOpen(exported func(k conflictKey) bool) {
	for k := range j.open {
		if !exported(k) {
			delete(j.open, k)
		}
	}
}
