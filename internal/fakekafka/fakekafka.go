package fakekafka

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID: ListOffsets with it asks
// a replica for its own log end offset.
const debugReplicaID = -2

// Kafka is a kfake cluster with the hooks the admin tests need: request
// counting, a Metadata rewrite (kfake always reports ISR == replicas) and a
// table of HW/LEO answers (kfake has no replication, so HW == LEO).
type Kafka struct {
	t testing.TB
	C *kfake.Cluster

	mu       sync.Mutex
	requests map[kmsg.Key]int
	// mdRewrite, when set, answers Metadata with a rewritten copy of mdBase.
	mdBase    *kmsg.MetadataResponse
	mdRewrite func(topic string, p *kmsg.MetadataResponseTopicPartition)
	mdBrokers func([]kmsg.MetadataResponseBroker) []kmsg.MetadataResponseBroker // nil: as they are
	// offsets, when set, answers every ListOffsets LATEST.
	offsets map[logparse.PartitionKey]*Offsets
	// elr, when set, answers DescribeTopicPartitions (kfake has no ELR).
	elr map[logparse.PartitionKey]ELR
	// reassignments, when set, answers ListPartitionReassignments (kfake
	// never has one in progress).
	reassignments map[logparse.PartitionKey]Reassignment
	// logDirs, when set, answers DescribeLogDirs by broker; logDirAsked are
	// the requests it answered.
	logDirs     map[int32]LogDirs
	logDirAsked []*kmsg.DescribeLogDirsRequest
	// delays hold requests of a key before the broker handles them.
	delays map[kmsg.Key]time.Duration
	// shares, once SetShareOffsets is called, answers DescribeShareGroupOffsets
	// (kfake's lag counts its own log, not the canned HWs).
	shares map[string]map[logparse.PartitionKey]int64
	// fail, when set, says which requests fail (FailRequests).
	fail func(key kmsg.Key, broker int32) bool
	// quorum, when set, answers DescribeQuorum, and apiVersions (kfake's
	// own answer, read once) lists it (quorum.go).
	quorum      *Quorum
	apiVersions *kmsg.ApiVersionsResponse
}

// LogDirs is one broker's DescribeLogDirs answer: each directory's error
// code by path (0: online), or Err for the whole request.
type LogDirs struct {
	Dirs map[string]int16
	Err  int16
}

// ELR is one partition's Eligible Leader Replicas and last-known ELR.
type ELR struct {
	ELR, LastKnown []int32
}

// Reassignment is one partition's reassignment in progress.
type Reassignment struct {
	Replicas, Adding, Removing []int32
}

// Offsets is one partition's answers: HW to consumers, LEO to replica id -2
// unless the asked broker has its own entry in ReplicaLEO.
type Offsets struct {
	HW, LEO    int64
	ReplicaLEO map[int32]int64
	LSO        *int64 // the read_committed answer; nil: the HW (no open transaction)
	LSOError   int16  // the read_committed answer's error code instead of an offset; 0: none
	// Tiered answers ListOffsets -5 (LATEST_TIERED; nil: -1, nothing
	// tiered), LocalStart -4 (EARLIEST_LOCAL); TieredError is the error code
	// of both instead; 0: none.
	Tiered      *int64
	LocalStart  int64
	TieredError int16
}

// New starts a 3-broker cluster (unless opts say otherwise), closed when the
// test ends.
func New(t testing.TB, opts ...kfake.Opt) *Kafka {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &Kafka{t: t, C: c, requests: make(map[kmsg.Key]int)}
	f.installFailures() // first: a failing request reaches no other hook
	f.install()
	f.installCanned()
	f.installLogDirs()
	f.installShares()
	return f
}

// installShares answers DescribeShareGroupOffsets from the start offsets
// SetShareOffsets set, with v1's lag against the canned HW: HW − start,
// never negative.
func (f *Kafka) installShares() {
	c := f.C
	c.ControlKey(int16(kmsg.DescribeShareGroupOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.shares == nil {
			return nil, nil, false
		}
		f.requests[kmsg.DescribeShareGroupOffsets]++ // handled here, so not counted by install's control
		req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, rg := range req.Groups {
			g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			g.GroupID = rg.GroupID
			starts, ok := f.shares[rg.GroupID]
			if !ok {
				g.ErrorCode = kerr.GroupIDNotFound.Code
			}
			perTopic(starts, func(topic string) {
				t := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
				t.Topic = topic
				g.Topics = append(g.Topics, t)
			}, func(k logparse.PartitionKey, start int64) {
				p := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				p.Partition, p.StartOffset = k.Partition, start
				if o := f.offsets[k]; req.Version >= 1 && o != nil {
					p.Lag = max(o.HW-start, 0)
				}
				last := &g.Topics[len(g.Topics)-1]
				last.Partitions = append(last.Partitions, p)
			})
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil, true
	})
}

func (f *Kafka) install() {
	c := f.C
	// Counting runs first and never handles, so every request is seen.
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.mu.Lock()
		f.requests[kmsg.Key(req.Key())]++
		f.mu.Unlock()
		return nil, nil, false
	})
	// Control(-1) only runs when no key-specific control handled the
	// request, so the rewriting controls count for themselves.
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.mdRewrite == nil {
			return nil, nil, false
		}
		f.requests[kmsg.Metadata]++
		resp := *f.mdBase
		resp.Version = kreq.GetVersion()
		if f.mdBrokers != nil {
			resp.Brokers = f.mdBrokers(slices.Clone(resp.Brokers))
		}
		resp.Topics = slices.Clone(resp.Topics)
		for i := range resp.Topics {
			rt := &resp.Topics[i]
			rt.Partitions = slices.Clone(rt.Partitions)
			for j := range rt.Partitions {
				f.mdRewrite(*rt.Topic, &rt.Partitions[j])
			}
		}
		return &resp, nil, true
	})
	c.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		node := c.CurrentNode()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.offsets == nil {
			return nil, nil, false
		}
		f.requests[kmsg.ListOffsets]++
		req := kreq.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.LeaderEpoch = -1
				o := f.offsets[logparse.PartitionKey{Topic: rt.Topic, Partition: rp.Partition}]
				switch {
				case o == nil:
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case rp.Timestamp == -5 || rp.Timestamp == -4:
					switch {
					case o.TieredError != 0:
						sp.ErrorCode = o.TieredError
					case rp.Timestamp == -4:
						sp.Offset = o.LocalStart
					case o.Tiered == nil:
						sp.Offset = -1
					default:
						sp.Offset = *o.Tiered
					}
				case req.ReplicaID == debugReplicaID:
					sp.Offset = o.LEO
					if v, ok := o.ReplicaLEO[node]; ok {
						sp.Offset = v
					}
				case req.IsolationLevel == 1 && o.LSOError != 0: // read_committed
					sp.ErrorCode = o.LSOError
				case req.IsolationLevel == 1 && o.LSO != nil:
					sp.Offset = *o.LSO
				default:
					sp.Offset = o.HW
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// installCanned answers DescribeTopicPartitions and ListPartitionReassignments
// from the tables once a test sets them.
func (f *Kafka) installCanned() {
	c := f.C
	c.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.elr == nil {
			return nil, nil, false
		}
		f.requests[kmsg.DescribeTopicPartitions]++
		req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		resp.Version = req.Version
		asked := func(topic string) bool {
			return len(req.Topics) == 0 || slices.ContainsFunc(req.Topics, func(t kmsg.DescribeTopicPartitionsRequestTopic) bool { return t.Topic == topic })
		}
		keys := slices.SortedFunc(maps.Keys(f.elr), func(a, b logparse.PartitionKey) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		for _, k := range keys {
			if !asked(k.Topic) {
				continue
			}
			if n := len(resp.Topics); n == 0 || *resp.Topics[n-1].Topic != k.Topic {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic = kmsg.StringPtr(k.Topic)
				resp.Topics = append(resp.Topics, rt)
			}
			rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			rp.Partition = k.Partition
			// A real broker sends empty lists, never null ones.
			rp.EligibleLeaderReplicas = append([]int32{}, f.elr[k].ELR...)
			rp.LastKnownELR = append([]int32{}, f.elr[k].LastKnown...)
			t := &resp.Topics[len(resp.Topics)-1]
			t.Partitions = append(t.Partitions, rp)
		}
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.ListPartitionReassignments), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.reassignments == nil {
			return nil, nil, false
		}
		f.requests[kmsg.ListPartitionReassignments]++
		req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.Version = req.Version
		// Like Kafka: only the named partitions that are being reassigned.
		for _, rt := range req.Topics {
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = rt.Topic
			for _, id := range rt.Partitions {
				r, ok := f.reassignments[logparse.PartitionKey{Topic: rt.Topic, Partition: id}]
				if !ok {
					continue
				}
				sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
				sp.Partition = id
				sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = r.Replicas, r.Adding, r.Removing
				st.Partitions = append(st.Partitions, sp)
			}
			if len(st.Partitions) > 0 {
				resp.Topics = append(resp.Topics, st)
			}
		}
		return resp, nil, true
	})
}

// installFailures closes the connection of every request FailRequests
// says fails, before any other hook sees it.
func (f *Kafka) installFailures() {
	c := f.C
	for key := range int16(kmsg.MaxKey + 1) {
		c.ControlKey(key, func(kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			f.mu.Lock()
			fail := f.fail
			f.mu.Unlock()
			if fail != nil && fail(kmsg.Key(key), c.CurrentNode()) {
				return nil, errors.New("fakekafka: request failed by FailRequests"), true
			}
			return nil, nil, false
		})
	}
}

// FailRequests makes every request fail(key, broker) is true for fail as a
// broker that is down does: its connection is closed unanswered. nil: none.
func (f *Kafka) FailRequests(fail func(key kmsg.Key, broker int32) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// installLogDirs answers DescribeLogDirs from the table once a test sets it.
func (f *Kafka) installLogDirs() {
	c := f.C
	c.ControlKey(int16(kmsg.DescribeLogDirs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		node := c.CurrentNode()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.logDirs == nil {
			return nil, nil, false
		}
		f.requests[kmsg.DescribeLogDirs]++
		req := kreq.(*kmsg.DescribeLogDirsRequest)
		f.logDirAsked = append(f.logDirAsked, req)
		resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.Version = req.Version
		answer := f.logDirs[node]
		resp.ErrorCode = answer.Err
		for _, path := range slices.Sorted(maps.Keys(answer.Dirs)) {
			d := kmsg.NewDescribeLogDirsResponseDir()
			d.Dir, d.ErrorCode = path, answer.Dirs[path]
			resp.Dirs = append(resp.Dirs, d)
		}
		return resp, nil, true
	})
}

// SetLogDirs makes every DescribeLogDirs answer from the table, by broker.
func (f *Kafka) SetLogDirs(dirs map[int32]LogDirs) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logDirs = dirs
}

// LogDirRequests returns and forgets the DescribeLogDirs requests answered
// from the table, as the broker decoded them.
func (f *Kafka) LogDirRequests() []*kmsg.DescribeLogDirsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.logDirAsked
	f.logDirAsked = nil
	return out
}

// SetELR makes every DescribeTopicPartitions answer the table's partitions
// of the topics asked for; list every partition of a topic, empty ones too.
func (f *Kafka) SetELR(elr map[logparse.PartitionKey]ELR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.elr = elr
}

// SetReassignments makes every ListPartitionReassignments answer from the
// table; an empty table means none in progress.
func (f *Kafka) SetReassignments(rs map[logparse.PartitionKey]Reassignment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rs == nil {
		rs = map[logparse.PartitionKey]Reassignment{}
	}
	f.reassignments = rs
}

// RewriteMetadata freezes the current real Metadata and from now on answers
// with rewrite applied to every partition.
func (f *Kafka) RewriteMetadata(rewrite func(topic string, p *kmsg.MetadataResponseTopicPartition)) {
	f.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.C.ListenAddrs()...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	// Drop our own controls while fetching the base.
	f.mu.Lock()
	f.mdRewrite = nil
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.mdBase, f.mdRewrite = base, rewrite
	f.mu.Unlock()
}

// RewriteBrokers makes the rewritten Metadata (RewriteMetadata) list the
// brokers rewrite returns, as Metadata does once a broker has died.
func (f *Kafka) RewriteBrokers(rewrite func([]kmsg.MetadataResponseBroker) []kmsg.MetadataResponseBroker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mdBrokers = rewrite
}

// SetOffsets makes every ListOffsets LATEST answer from the table; a
// partition not in it answers UNKNOWN_TOPIC_OR_PARTITION.
func (f *Kafka) SetOffsets(k logparse.PartitionKey, o Offsets) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.offsets == nil {
		f.offsets = make(map[logparse.PartitionKey]*Offsets)
	}
	f.offsets[k] = &o
}

// RequestCounts returns and resets the request counters.
func (f *Kafka) RequestCounts() map[kmsg.Key]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = make(map[kmsg.Key]int)
	return out
}

// CreateTopic creates a topic and places partition p's leader on
// leaders[p], so leader ids (and the leader epoch, 1) are deterministic.
func (f *Kafka) CreateTopic(name string, configs map[string]string, leaders ...int32) {
	f.t.Helper()
	if err := f.C.CreateTopic(name, int32(len(leaders)), configs); err != nil {
		f.t.Fatal(err)
	}
	for p, l := range leaders {
		if err := f.C.MoveTopicPartition(name, int32(p), l); err != nil {
			f.t.Fatal(err)
		}
	}
}

// SetDelay makes every request of key wait d before the broker handles it,
// as a busy broker does: that connection's later requests wait behind it,
// other connections are served meanwhile. 0 ends it.
func (f *Kafka) SetDelay(key kmsg.Key, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delays == nil {
		f.delays = make(map[kmsg.Key]time.Duration)
	}
	if _, installed := f.delays[key]; !installed {
		f.C.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
			f.C.KeepControl()
			f.mu.Lock()
			d := f.delays[key]
			f.mu.Unlock()
			if d > 0 {
				f.C.SleepControl(func() { time.Sleep(d) })
			}
			return nil, nil, false
		})
	}
	f.delays[key] = d
}

// CommitOffsets commits offsets for group as a consumer outside any
// generation (a simple consumer group), so that it is listed and fetched.
func (f *Kafka) CommitOffsets(group string, offsets map[logparse.PartitionKey]int64) {
	f.t.Helper()
	// Up to 3.9: OffsetCommit v10 names topics by id, which kfake does not take.
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.C.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	perTopic(offsets, func(topic string) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}, func(k logparse.PartitionKey, o int64) {
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = k.Partition, o
		last := &req.Topics[len(req.Topics)-1]
		last.Partitions = append(last.Partitions, p)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				f.t.Fatalf("commit %s %s/%d: error %d", group, rt.Topic, rp.Partition, rp.ErrorCode)
			}
		}
	}
}

// SetShareOffsets sets the share-partition start offsets of share group
// (created if need be, and then listed by its coordinator) with
// AlterShareGroupOffsets, as kafka-share-groups.sh --reset-offsets does.
func (f *Kafka) SetShareOffsets(group string, offsets map[logparse.PartitionKey]int64) {
	f.t.Helper()
	SetShareOffsets(f.t, f.C.ListenAddrs(), group, offsets)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shares == nil {
		f.shares = make(map[string]map[logparse.PartitionKey]int64)
	}
	f.shares[group] = maps.Clone(offsets)
}

// SetShareOffsets is Kafka.SetShareOffsets for any cluster at addrs.
func SetShareOffsets(t testing.TB, addrs []string, group string, offsets map[logparse.PartitionKey]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = group
	perTopic(offsets, func(topic string) {
		rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}, func(k logparse.PartitionKey, o int64) {
		p := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
		p.Partition, p.StartOffset = k.Partition, o
		last := &req.Topics[len(req.Topics)-1]
		last.Partitions = append(last.Partitions, p)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("alter share group offsets of %s: %v", group, err)
	}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Fatalf("alter share group offsets of %s on %s/%d: %v", group, rt.Topic, p.Partition, err)
			}
		}
	}
}

// SetFeature sets the cluster's finalized level of feature name (0 turns it
// off) with UpdateFeatures, as kafka-features.sh does.
func (f *Kafka) SetFeature(name string, level int16) {
	f.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.C.ListenAddrs()...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, 3 // 3: unsafe downgrade, so any level goes
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		f.t.Fatalf("update feature %s to %d: %v", name, level, err)
	}
}

// perTopic walks offsets as Kafka's requests and answers list them, by
// topic then partition: topic is called once per topic before its
// partitions, each then given to partition.
func perTopic(offsets map[logparse.PartitionKey]int64, topic func(name string), partition func(k logparse.PartitionKey, offset int64)) {
	keys := slices.SortedFunc(maps.Keys(offsets), func(a, b logparse.PartitionKey) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for i, k := range keys {
		if i == 0 || keys[i-1].Topic != k.Topic {
			topic(k.Topic)
		}
		partition(k, offsets[k])
	}
}
