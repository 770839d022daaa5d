package poller

import (
	"context"
	"sync"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
)

// The third stage of a refresh: the fetchers, each in a file fetch_*.go,
// run concurrently on the plan, under the refresh's deadline. What has not
// answered by then is left unknown. A new read is a fetch function of its
// own, a field here and a line in fetch, and build (build.go) uses its
// answer.

// fetched is what the fetchers returned.
type fetched struct {
	offsets     offsets         // fetch_offsets.go
	minISR      minISRReadings  // minisr.go; ok false when DescribeConfigs failed
	elr         *elr.Result     // fetch_elr.go; nil: no ELR series this refresh
	reassign    reassignments   // fetch_reassign.go; nil when ListPartitionReassignments failed
	groups      groupsRead      // fetch_groups.go; its reads nil when the collector is off
	shareGroups shareGroupsRead // fetch_share_groups.go; its reads nil when the read is off
	lso         []offsetAnswer  // fetch_lso.go, by plan index; nil when the read is off
	logDirs     []logDirRead    // fetch_logdirs.go, by broker; nil when the read is off
	quorum      *quorumRead     // quorum.go; nil when this sidecar does not speak for the cluster
	tiering     []tieringAnswer // fetch_tiering.go, by plan index; nil when the read is off
}

// fetch runs every fetcher on the plan and waits for all of them.
func fetch(ctx context.Context, r *round, p *refreshPlan, elrReader *elr.Reader, quorum *quorumReader, groups *groupCollector, lso bool,
	tiering *tieringReader, shareGroups *shareGroupReader,
) *fetched {
	var (
		got fetched
		wg  sync.WaitGroup
	)
	wg.Go(func() {
		got.offsets = fetchOffsets(ctx, r, p)
		// After the offsets: a KRaft broker forwards ListPartitionReassignments
		// to the controller, and Kafka answers one connection's requests in
		// order, so with the controller frozen the HW and LEO reads waited
		// behind it until the deadline, every refresh, and no stall was seen.
		got.reassign = fetchReassignments(ctx, r, p)
	})
	wg.Go(func() {
		// The tiered topics are those DescribeConfigs answers with
		// remote.storage.enable=true: the tiering read waits for it.
		got.minISR = fetchMinISR(ctx, r, p, tiering != nil)
		got.tiering = fetchTiering(ctx, r, p, tiering, &got.minISR)
	})
	wg.Go(func() { got.elr = fetchELR(ctx, r, p, elrReader) })
	wg.Go(func() { got.groups = groups.fetch(ctx, r, p) })
	wg.Go(func() { got.shareGroups = shareGroups.fetch(ctx, r, p) })
	wg.Go(func() { got.lso = fetchLSO(ctx, r, p, lso) })
	wg.Go(func() { got.logDirs = fetchLogDirs(ctx, r, p) })
	wg.Go(func() { got.quorum = fetchQuorum(ctx, r, p, quorum) })
	wg.Wait()
	return &got
}
