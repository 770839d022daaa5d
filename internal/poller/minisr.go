package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
)

// A fetcher: the configured min.insync.replicas of every exported topic, and
// the answering broker's own, in one DescribeConfigs; with tiered storage read,
// each topic's remote.storage.enable in the same request. A topic whose answer
// cannot be used is named with the reason, never silently left out.

// minISRConfig is the topic config the poller always reads; remoteStorageConfig
// the one it reads beside it with --collector.tiered-storage.
const (
	minISRConfig        = "min.insync.replicas"
	remoteStorageConfig = "remote.storage.enable"
)

// minISRReadings is what DescribeConfigs said.
type minISRReadings struct {
	ok       bool                // the request was answered
	values   map[string]int      // usable values, by topic
	unusable map[string]Unusable // every other asked topic, by topic
	// brokerDefault is the answering broker's own min.insync.replicas
	// (BROKER resource), 0 when it was not readable.
	brokerDefault int
	brokerErr     Unusable // why brokerDefault is 0
	// tiered are the topics answered with remote.storage.enable=true, when
	// it was asked (nil otherwise).
	tiered map[string]bool
}

// fetchMinISR asks the broker that answered Metadata; ok is false when the
// request failed.
func fetchMinISR(ctx context.Context, r *round, p *refreshPlan, tiering bool) minISRReadings {
	if len(p.configTopics) == 0 {
		return minISRReadings{ok: true}
	}
	broker := ""
	if id, ok := r.brokerAt(r.metadataAddr); ok {
		broker = strconv.Itoa(int(id))
	}
	a, err := r.pool.describeMinISR(ctx, r.metadataAddr, p.configTopics, broker, tiering)
	r.recordAt(r.metadataAddr, err == nil)
	if err != nil {
		r.fail(RequestDescribeConfigs, -1, err)
		return minISRReadings{brokerErr: UnusableRequestFailed}
	}
	return a
}

// describeMinISR reads min.insync.replicas of topics, and of broker unless
// it is "", in one DescribeConfigs; with tiering, remote.storage.enable of
// the topics too.
func (p *brokerPool) describeMinISR(ctx context.Context, addr string, topics []string, broker string, tiering bool) (minISRReadings, error) {
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(p.conf.Version), IncludeSynonyms: true}
	names := []string{minISRConfig}
	if tiering {
		names = append(names, remoteStorageConfig)
	}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.TopicResource, Name: t, ConfigNames: names,
		})
	}
	if broker != "" {
		// A broker describes only its own BROKER resource; its value is the
		// default a topic without an override gets.
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.BrokerResource, Name: broker, ConfigNames: []string{minISRConfig},
		})
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
	if err != nil {
		return minISRReadings{}, fmt.Errorf("describe configs from %s: %w", addr, err)
	}
	a := readMinISR(resp, topics, broker)
	if tiering {
		a.tiered = readTiered(resp)
	}
	return a, nil
}

// readTiered are the topics of a DescribeConfigs answer with
// remote.storage.enable=true.
func readTiered(resp *sarama.DescribeConfigsResponse) map[string]bool {
	tiered := make(map[string]bool)
	for _, r := range resp.Resources {
		if r == nil || r.Type != sarama.TopicResource || r.ErrorCode != 0 {
			continue
		}
		for _, e := range r.Configs {
			if e != nil && e.Name == remoteStorageConfig && strings.EqualFold(e.Value, "true") {
				tiered[r.Name] = true
			}
		}
	}
	return tiered
}

// readMinISR sorts a DescribeConfigs answer into usable values and the
// reason each other asked topic is unusable.
func readMinISR(resp *sarama.DescribeConfigsResponse, topics []string, broker string) minISRReadings {
	a := minISRReadings{ok: true, values: make(map[string]int, len(topics)), brokerErr: UnusableMissing}
	for _, r := range resp.Resources {
		if r == nil {
			continue
		}
		v, why := minISRValue(r)
		switch r.Type {
		case sarama.BrokerResource:
			if r.Name == broker && broker != "" {
				a.brokerDefault, a.brokerErr = v, why
			}
		case sarama.TopicResource:
			if why == usable {
				a.values[r.Name] = v
				continue
			}
			if a.unusable == nil {
				a.unusable = make(map[string]Unusable)
			}
			if _, dup := a.values[r.Name]; !dup {
				a.unusable[r.Name] = why
			}
		}
	}
	for _, t := range topics {
		_, got := a.values[t]
		if _, bad := a.unusable[t]; !got && !bad {
			if a.unusable == nil {
				a.unusable = make(map[string]Unusable)
			}
			a.unusable[t] = UnusableMissing
		}
	}
	// A topic answered twice, once usable, is usable.
	for t := range a.values {
		delete(a.unusable, t)
	}
	return a
}

// usable is minISRValue's "nothing wrong".
const usable Unusable = -1

// minISRValue reads one resource's min.insync.replicas: the value, or why
// there is none.
func minISRValue(r *sarama.ResourceResponse) (int, Unusable) {
	if r.ErrorCode != 0 {
		kerr := sarama.KError(r.ErrorCode)
		if errors.Is(kerr, sarama.ErrTopicAuthorizationFailed) || errors.Is(kerr, sarama.ErrClusterAuthorizationFailed) {
			return 0, UnusableAuthorization
		}
		return 0, UnusableError
	}
	for _, e := range r.Configs {
		if e == nil || e.Name != minISRConfig {
			continue
		}
		// Value is already the effective one: the topic override, else
		// the first broker-level synonym. Kafka never allows more than
		// an int32, nor less than 1.
		v, err := strconv.ParseInt(e.Value, 10, 32)
		if err != nil || v <= 0 {
			return 0, UnusableValue
		}
		return int(v), usable
	}
	return 0, UnusableMissing
}

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
