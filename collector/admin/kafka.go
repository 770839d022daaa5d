package admin

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/IBM/sarama"
)

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID: a ListOffsets request that
// carries it is answered by any replica, from its own log, without the
// isolation level, i.e. LATEST = that replica's log end offset.
const debugReplicaID = -2

// minISRConfig is the one topic config the poller reads.
const minISRConfig = "min.insync.replicas"

// partitionLogger is the broker logger that prints HW updates (DEBUG) and
// "Not increasing HWM … under min ISR" (TRACE).
const partitionLogger = "kafka.cluster.Partition"

// brokerPool keeps one sarama connection per broker address, opened lazily
// and dropped on error so the next refresh redials. Plain sarama.Broker, not
// sarama.Client: the poller chooses which broker answers each request (its
// own broker for Metadata, the leader for HW, every replica for its LEO), and
// a Client would add its own metadata refreshes and retries on top.
type brokerPool struct {
	conf   *sarama.Config
	mu     sync.Mutex
	byAddr map[string]*sarama.Broker
}

func newBrokerPool(conf *sarama.Config) *brokerPool {
	return &brokerPool{conf: conf, byAddr: make(map[string]*sarama.Broker)}
}

// get returns the connection to addr. Dialling happens in the background;
// the first request waits for it (bounded by Net.DialTimeout).
func (p *brokerPool) get(addr string) (*sarama.Broker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.byAddr[addr]; ok {
		return b, nil
	}
	b := sarama.NewBroker(addr)
	if err := b.Open(p.conf); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, err
	}
	p.byAddr[addr] = b
	return b, nil
}

// drop closes the connection to addr after a failed request.
func (p *brokerPool) drop(addr string) {
	p.mu.Lock()
	b, ok := p.byAddr[addr]
	delete(p.byAddr, addr)
	p.mu.Unlock()
	if ok {
		_ = b.Close() // ErrNotConnected when the dial itself failed
	}
}

func (p *brokerPool) close() {
	p.mu.Lock()
	addrs := make([]string, 0, len(p.byAddr))
	for a := range p.byAddr {
		addrs = append(addrs, a)
	}
	p.mu.Unlock()
	for _, a := range addrs {
		p.drop(a)
	}
}

// metadata asks addr for every topic, never creating one.
func (p *brokerPool) metadata(addr string) (*sarama.MetadataResponse, error) {
	b, err := p.get(addr)
	if err != nil {
		return nil, err
	}
	req := sarama.NewMetadataRequest(p.conf.Version, nil) // nil = all topics
	req.AllowAutoTopicCreation = false
	resp, err := b.GetMetadata(req)
	if err != nil {
		p.drop(addr)
		return nil, fmt.Errorf("metadata from %s: %w", addr, err)
	}
	return resp, nil
}

// offsetAnswer is one partition's answer to a ListOffsets LATEST.
type offsetAnswer struct {
	offset      int64
	leaderEpoch int32
	ok          bool // answered without error
}

// listOffsetsLatest sends one ListOffsets LATEST to addr for the partitions
// parts[i] of idx, and hands each answer to put(i, answer) before returning:
// the decoded response is garbage by then. With replicaID -1 (a consumer,
// read_uncommitted) the leader answers its high watermark; with
// debugReplicaID the broker answers its own log end offset. Partitions
// answered with an error (or not at all) are not put.
func (p *brokerPool) listOffsetsLatest(addr string, replicaID int32, parts []plannedPartition, idx []int32, put func(i int32, ans offsetAnswer)) error {
	b, err := p.get(addr)
	if err != nil {
		return err
	}
	req := sarama.NewOffsetRequest(p.conf.Version)
	if replicaID != -1 {
		req.SetReplicaID(replicaID)
	}
	req.IsolationLevel = sarama.ReadUncommitted
	for _, i := range idx {
		k := &parts[i].key
		req.AddBlock(k.topic, k.partition, sarama.OffsetNewest, 1)
	}
	resp, err := b.GetAvailableOffsets(req)
	if err != nil {
		p.drop(addr)
		return fmt.Errorf("list offsets from %s: %w", addr, err)
	}
	for _, i := range idx {
		k := &parts[i].key
		if blk := resp.GetBlock(k.topic, k.partition); blk != nil && blk.Err == sarama.ErrNoError {
			put(i, offsetAnswer{offset: blk.Offset, leaderEpoch: blk.LeaderEpoch, ok: true})
		}
	}
	return nil
}

// describeMinISR reads min.insync.replicas of topics in one DescribeConfigs.
// Topics the broker could not describe (deleted meanwhile, no ACL) are left
// out; unparsable values too.
func (p *brokerPool) describeMinISR(addr string, topics []string) (map[string]int, error) {
	b, err := p.get(addr)
	if err != nil {
		return nil, err
	}
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(p.conf.Version), IncludeSynonyms: true}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.TopicResource, Name: t, ConfigNames: []string{minISRConfig},
		})
	}
	resp, err := b.DescribeConfigs(req)
	if err != nil {
		p.drop(addr)
		return nil, fmt.Errorf("describe configs from %s: %w", addr, err)
	}
	out := make(map[string]int, len(topics))
	for _, r := range resp.Resources {
		if r == nil || r.ErrorCode != 0 {
			continue
		}
		for _, e := range r.Configs {
			if e == nil || e.Name != minISRConfig {
				continue
			}
			// Value is already the effective one: the topic override, else
			// the first broker-level synonym.
			if v, err := strconv.Atoi(e.Value); err == nil && v > 0 {
				out[r.Name] = v
			}
		}
	}
	return out, nil
}

// brokerLoggerLevel returns the level of logger on broker id as the broker
// reports it ("" when it does not say).
func (p *brokerPool) brokerLoggerLevel(addr string, id int32, logger string) (string, error) {
	b, err := p.get(addr)
	if err != nil {
		return "", err
	}
	req := &sarama.DescribeConfigsRequest{
		Version: describeConfigsVersion(p.conf.Version),
		Resources: []*sarama.ConfigResource{{
			Type: sarama.BrokerLoggerResource, Name: strconv.Itoa(int(id)), ConfigNames: []string{logger},
		}},
	}
	resp, err := b.DescribeConfigs(req)
	if err != nil {
		p.drop(addr)
		return "", err
	}
	for _, r := range resp.Resources {
		if r == nil {
			continue
		}
		if r.ErrorCode != 0 {
			return "", fmt.Errorf("describe broker logger: %w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
		for _, e := range r.Configs {
			if e != nil && e.Name == logger {
				return e.Value, nil
			}
		}
	}
	return "", nil
}

// alterBrokerLogger sets (level != nil) or deletes (level == nil, back to
// the broker's configured level) logger on broker id. Kafka applies
// BROKER_LOGGER changes only on the broker that receives them.
func (p *brokerPool) alterBrokerLogger(addr string, id int32, logger string, level *string) error {
	b, err := p.get(addr)
	if err != nil {
		return err
	}
	op := sarama.IncrementalAlterConfigsOperationSet
	if level == nil {
		op = sarama.IncrementalAlterConfigsOperationDelete
	}
	req := &sarama.IncrementalAlterConfigsRequest{
		Version: 1,
		Resources: []*sarama.IncrementalAlterConfigsResource{{
			Type:          sarama.BrokerLoggerResource,
			Name:          strconv.Itoa(int(id)),
			ConfigEntries: map[string]sarama.IncrementalAlterConfigsEntry{logger: {Operation: op, Value: level}},
		}},
	}
	resp, err := b.IncrementalAlterConfigs(req)
	if err != nil {
		p.drop(addr)
		return err
	}
	for _, r := range resp.Resources {
		if r != nil && r.ErrorCode != 0 {
			return fmt.Errorf("%w (%s)", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
	}
	return nil
}

// describeConfigsVersion mirrors sarama's ClusterAdmin choice.
func describeConfigsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_8_0_0):
		return 4
	case v.IsAtLeast(sarama.V2_6_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 1
	}
	return 0
}
