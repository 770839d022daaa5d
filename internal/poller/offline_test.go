package poller

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// TestPollerOfflineLogDir (issue 20 item 2): a replica Metadata lists as
// offline while its broker is up (a failed log directory) is in the
// partition's Lags as offline, without a lag, instead of missing; a replica
// of a broker Metadata no longer lists (dead, fenced) is not.
func TestPollerOfflineLogDir(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1)
	for p := range int32(2) {
		f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: p}, fakekafka.Offsets{HW: 10, LEO: 10, ReplicaLEO: map[int32]int64{0: 10, 1: 10, 2: 8}})
	}
	f.RewriteMetadata(func(_ string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 0 {
			p.OfflineReplicas = []int32{2, 7} // 2 is up; 7 is no broker of the cluster
			p.ISR = []int32{0, 1}
		}
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	expect(t, "lags", table(a.Snapshot(), func(p *Partition) any { return fmt.Sprint(p.Lags) }),
		"orders/0=[{1 0} {2 offline}] orders/1=[{2 2} {0 0}]")
}
