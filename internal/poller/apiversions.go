package poller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersions asks broker b which requests and versions it takes, for the
// reads that send a request only some brokers know (the quorum, tiering,
// share groups).
func apiVersions(ctx context.Context, b *kgo.Broker) (*kmsg.ApiVersionsResponse, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	// From v3 a broker refuses a request without a valid software name.
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kafka-replication-exporter", "1"
	resp, err := req.RequestWith(ctx, b)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	return resp, nil
}

// maxVersionOf is the highest version of request key the answer lists, -1
// when it lists none.
func maxVersionOf(resp *kmsg.ApiVersionsResponse, key kmsg.Key) int16 {
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(key) {
			return k.MaxVersion
		}
	}
	return -1
}

// finalizedLevel is the cluster-wide finalized level of feature name the
// answer lists (share.version, …), 0 when it lists none.
func finalizedLevel(resp *kmsg.ApiVersionsResponse, name string) int16 {
	for _, f := range resp.FinalizedFeatures {
		if f.Name == name {
			return f.MaxVersionLevel
		}
	}
	return 0
}

// brokerSupport remembers, for a read only some brokers take, which brokers
// listed it, by the address they had then (a broker that moves is asked
// again), and each broker's last state, to log its changes once.
type brokerSupport[S comparable] struct {
	known     S // the state of a broker that answers
	supported map[int32]string
	state     map[int32]S
}

func newBrokerSupport[S comparable](known S) brokerSupport[S] {
	return brokerSupport[S]{known: known, supported: make(map[int32]string), state: make(map[int32]S)}
}

// listed reports whether broker id listed the read at addr.
func (b *brokerSupport[S]) listed(id int32, addr string) bool { return b.supported[id] == addr }

// observe records broker id's state of this refresh, with addr the address
// that newly listed the read ("" if none), and says whether it changed and
// from what. A broker in any other state than known is asked again next
// time; a first state that is known is no change.
func (b *brokerSupport[S]) observe(id int32, s S, addr string) (was S, changed bool) {
	switch {
	case addr != "":
		b.supported[id] = addr
	case s != b.known:
		delete(b.supported, id)
	}
	was, seen := b.state[id]
	b.state[id] = s
	return was, seen && was != s || !seen && s != b.known
}
