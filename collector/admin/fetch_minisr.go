package admin

import (
	"context"
	"fmt"
	"strconv"

	"github.com/IBM/sarama"
)

// A fetcher: the configured min.insync.replicas of every exported topic, in
// one DescribeConfigs.

// minISRConfig is the one topic config the poller reads.
const minISRConfig = "min.insync.replicas"

// fetchMinISR asks the broker that answered Metadata; nil when it failed.
func fetchMinISR(ctx context.Context, r *round, p *refreshPlan) map[string]int {
	if len(p.configTopics) == 0 {
		return nil
	}
	m, err := r.pool.describeMinISR(ctx, r.metadataAddr, p.configTopics)
	r.recordAt(r.metadataAddr, err == nil)
	if err != nil {
		r.fail(RequestDescribeConfigs, -1, err)
		return nil
	}
	return m
}

// describeMinISR reads min.insync.replicas of topics in one DescribeConfigs.
// Topics the broker could not describe (deleted meanwhile, no ACL) are left
// out; unparsable values too.
func (p *brokerPool) describeMinISR(ctx context.Context, addr string, topics []string) (map[string]int, error) {
	req := &sarama.DescribeConfigsRequest{Version: describeConfigsVersion(p.conf.Version), IncludeSynonyms: true}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{
			Type: sarama.TopicResource, Name: t, ConfigNames: []string{minISRConfig},
		})
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
	if err != nil {
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
