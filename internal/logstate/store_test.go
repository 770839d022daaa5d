package logstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

func applyLines(t testing.TB, s *Store, lines ...string) {
	t.Helper()
	p := logparse.NewParser(time.UTC)
	for _, l := range lines {
		ev, ok := p.Parse(logparse.Record{First: []byte(l), Line: 1, Lines: 1})
		if !ok {
			t.Fatalf("want parsed: %s", l)
		}
		s.Apply(&ev)
	}
}

const isrUpd = "[2026-11-30 10:00:0%s,000] INFO [Partition %s broker=1] ISR updated to %s  and version updated to %s (kafka.cluster.Partition)"

func line(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

// partitions returns the snapshot's partitions by key.
func partitions(s *Store) map[logparse.PartitionKey]Partition {
	var snap Snapshot
	s.Snapshot(&snap)
	m := make(map[logparse.PartitionKey]Partition, len(snap.Partitions))
	for _, p := range snap.Partitions {
		m[p.PartitionKey] = p
	}
	return m
}

func TestStoreSnapshot(t *testing.T) {
	s := NewStore(func(topic string) bool { return topic != "excluded" })
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		line(isrUpd, "2", "orders-0", "1,2", "6"),
		line(isrUpd, "3", "orders-0", "1,2,3", "7"),
		line(isrUpd, "4", "excluded-0", "1,2", "7"),
	)
	var snap Snapshot
	s.Snapshot(&snap)
	if len(snap.Partitions) != 1 {
		t.Fatalf("want orders-0 only, got %+v", snap.Partitions)
	}
	p := snap.Partitions[0]
	if p.PartitionKey != (logparse.PartitionKey{Topic: "orders", Partition: 0}) || p.Counters[ISRShrinks] != 1 || p.Counters[ISRExpands] != 1 ||
		!p.HasISR || p.ISRSize != 3 || p.HasHW || p.HasLeaderEpoch {
		t.Errorf("unexpected partition state %+v", p)
	}
	if snap.Events[logparse.ISRUpdate] != 4 {
		t.Errorf("want the excluded topic's event counted by type too: 4, got %d", snap.Events[logparse.ISRUpdate])
	}
	if want := time.Date(2026, 11, 30, 10, 0, 4, 0, time.UTC); !snap.LastEvent[logparse.ISRUpdate].Equal(want) {
		t.Errorf("want last isr_update at %v, got %v", want, snap.LastEvent[logparse.ISRUpdate])
	}
}

// A follower line means this broker no longer leads the partition: its log stops
// speaking for the ISR, and the overlay says nothing.
func TestStoreLeaderViewEndsWithFollowerLine(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		"[2026-11-30 10:00:05,000] INFO [Broker id=1] Follower orders-0 starts at leader epoch 4 from offset 10 with partition epoch 9 and high watermark 10. Current leader is 2. Previous leader Some(2) and previous leader epoch was 4. (state.change.logger)",
	)
	if _, _, _, _, ok := s.LogPartitionState("orders", 0); ok {
		t.Error("want no log view for a partition this broker follows")
	}
	if p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]; p.HasISR || p.HasLeaderEpoch || !p.HasHW || p.HW != 10 {
		t.Errorf("want the HW and no leader-only gauges, got %+v", p)
	}
}

// A deleted topic's state goes once the admin API no longer lists it.
func TestStoreRetainTopics(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s, line(isrUpd, "1", "gone-0", "1,2,3", "5"), line(isrUpd, "1", "kept-0", "1,2,3", "5"))
	s.Retain(func(topic string) bool { return topic == "kept" }, nil)
	if n := len(partitions(s)); n != 2 {
		t.Errorf("want a topic seen within the grace period kept (it may be newer than the metadata), got %d partitions", n)
	}
	s.now = func() time.Time { return time.Now().Add(2 * retainGrace) }
	s.Retain(func(topic string) bool { return topic == "kept" }, nil)
	if n := len(partitions(s)); n != 1 {
		t.Errorf("want only the kept topic, got %d partitions", n)
	}
	// The topic comes back (re-created): its events reach a new state.
	applyLines(t, s, line(isrUpd, "1", "gone-0", "1,2", "1"))
	if p, ok := partitions(s)[logparse.PartitionKey{Topic: "gone", Partition: 0}]; !ok || p.ISRSize != 2 || p.Counters[ISRExpands] != 0 {
		t.Errorf("want gone-0 in state again with ISR size 2 and no earlier expansion, got %+v", p)
	}
}

// The topic filter is a regexp: the store asks it once per topic, not once
// per event, and its answer still holds for every later event.
func TestStoreAsksTheTopicFilterOncePerTopic(t *testing.T) {
	asked := map[string]int{}
	s := NewStore(func(topic string) bool { asked[topic]++; return topic != "excluded" })
	var lines []string
	for i := 1; i <= 5; i++ {
		lines = append(lines, line(isrUpd, "1", "orders-0", "1,2,3", strconv.Itoa(i)),
			line(isrUpd, "1", "excluded-0", "1,2", strconv.Itoa(i)),
			line(isrUpd, "1", "orders-1", "1,2", strconv.Itoa(i)))
	}
	applyLines(t, s, lines...)
	if asked["orders"] != 1 || asked["excluded"] != 1 {
		t.Errorf("want the filter asked once per topic, got %v", asked)
	}
	parts := partitions(s)
	if len(parts) != 2 {
		t.Errorf("want orders-0 and orders-1 in state, got %d partitions", len(parts))
	}
	for k := range parts {
		if k.Topic == "excluded" {
			t.Errorf("excluded topic in state: %v", k)
		}
	}
}

// TRACE lines counted only by type (hw_skip, isr_ack_progress, replica_leo)
// touch no partition state: the partition appears with its first line that
// it is counted for.
func TestStoreCountsTraceOnlyTypesByType(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s,
		"[2026-11-30 10:00:01,000] TRACE [Partition orders-0 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89), awaiting Set(broker 3: 88) (kafka.cluster.Partition)",
		"[2026-11-30 10:00:01,000] DEBUG [Partition orders-0 broker=1] Recorded replica 2 log end offset (LEO) position 89 and log start offset 0. (kafka.cluster.Partition)",
	)
	var snap Snapshot
	s.Snapshot(&snap)
	if len(snap.Partitions) != 0 || snap.Events[logparse.ISRAckProgress] != 1 || snap.Events[logparse.ReplicaLEO] != 1 {
		t.Errorf("want 2 events counted by type and no partition state, got %d partitions, events %v/%v",
			len(snap.Partitions), snap.Events[logparse.ISRAckProgress], snap.Events[logparse.ReplicaLEO])
	}
	applyLines(t, s, "[2026-11-30 10:00:02,000] DEBUG [Partition orders-0 broker=1] High watermark updated from (offset=88, segment=[0:1]) to (offset=89, segment=[0:2]) (kafka.cluster.Partition)")
	if p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]; !p.HasHW || p.HW != 89 || p.Counters[HWUpdates] != 1 {
		t.Errorf("want the partition created by its HW update, got %+v", p)
	}
}

// The stream applies what several files hold merged by log time: the leader
// line of state-change.log before the server.log ISR lines logged after it.
func TestStreamMergesFilesByTime(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server.log")
	stateChange := filepath.Join(dir, "state-change.log")
	write := func(path string, lines ...string) {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(server, line(isrUpd, "2", "orders-0", "1,2", "6"), line(isrUpd, "3", "orders-0", "1,2,3", "7"))
	write(stateChange, "[2026-11-30 10:00:01,000] INFO [Broker id=1] Leader orders-0 with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch 4 from offset 10 with partition epoch 5, high watermark 10, ISR [1,2,3], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)")
	s := NewStore(nil)
	var files []*LogFile
	for _, path := range []string{server, stateChange} {
		files = append(files, NewLogFile(path, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond}))
	}
	drain(NewStream(s, files, time.Nanosecond))
	p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]
	if p.Counters[LeaderTransitions] != 1 || p.Counters[ISRShrinks] != 1 || p.Counters[ISRExpands] != 1 {
		t.Errorf("want the leader line first (ISR 3), then a shrink to 2 and an expand to 3, got %+v", p.Counters)
	}
}

// A replica moved away from this broker: its state goes an hour after its
// last event, so its last counter increments are still scraped.
func TestStoreRetainHostedPartitions(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s, line(isrUpd, "1", "orders-0", "1,2,3", "5"), line(isrUpd, "1", "orders-1", "1,2,3", "5"))
	all := func(string) bool { return true }
	hosted := func(k logparse.PartitionKey) bool { return k.Partition == 0 }
	s.now = func() time.Time { return time.Now().Add(2 * retainGrace) }
	s.Retain(all, hosted)
	if n := len(partitions(s)); n != 2 {
		t.Errorf("want a partition moved away kept within the grace, got %d partitions", n)
	}
	s.now = func() time.Time { return time.Now().Add(hostedGrace + time.Minute) }
	s.Retain(all, hosted)
	if _, ok := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 1}]; ok || len(partitions(s)) != 1 {
		t.Errorf("want only the hosted orders-0 left, got %v", partitions(s))
	}
}

// A log naming more partitions than the bound keeps state for the bound and
// counts the events it refused; the event totals still count them all.
func TestStoreBoundsPartitions(t *testing.T) {
	s := NewStore(nil)
	s.SetMaxPartitions(100)
	var lines []string
	for p := range 1000 {
		lines = append(lines, line(isrUpd, "1", "t-"+strconv.Itoa(p), "1,2,3", "5"))
	}
	applyLines(t, s, lines...)
	var snap Snapshot
	s.Snapshot(&snap)
	if len(snap.Partitions) != 100 || snap.Refused != 900 || snap.Events[logparse.ISRUpdate] != 1000 {
		t.Errorf("want 100 partitions, 900 refused, 1000 isr_update events; got %d, %d, %d",
			len(snap.Partitions), snap.Refused, snap.Events[logparse.ISRUpdate])
	}
}

const shrinking = "[2026-11-30 10:00:0%s,000] INFO [Partition %s broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 202, endOffset: 2216). Out of sync replicas: (brokerId: 2, endOffset: 202, lastCaughtUpTimeMs: 1796046741395) (brokerId: 3, endOffset: 202, lastCaughtUpTimeMs: 1796046741395). (kafka.cluster.Partition)"

// A shrink the leader logged is pending until a line (or the admin API)
// shows it committed.
func TestStorePendingISRShrink(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s, line(isrUpd, "1", "orders-0", "1,2,3", "5"), line(shrinking, "2", "orders-0"))
	s.ObserveISR("orders", 0, 3)
	if !s.PendingISRShrink("orders", 0) {
		t.Fatal("want the logged shrink pending while the metadata still says ISR 3")
	}
	s.ObserveISR("orders", 0, 1)
	if s.PendingISRShrink("orders", 0) {
		t.Error("want no pending shrink once the metadata shows the ISR at its target")
	}
	applyLines(t, s, line(shrinking, "3", "orders-0"), line(isrUpd, "4", "orders-0", "1", "6"))
	if s.PendingISRShrink("orders", 0) {
		t.Error("want no pending shrink after the leader logged the committed ISR")
	}
	if s.PendingISRShrink("other", 0) {
		t.Error("want nothing pending for a partition the log never named")
	}
}

// A sidecar started after the leader's election reads no leader line before
// the shrink; the shrink line itself says this broker leads (issue 14 item 2a,
// seen on Kafka 4.4.0: the stall cause stayed unknown).
func TestStorePendingISRShrinkWithoutEarlierLeaderLine(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s, line(shrinking, "2", "orders-0"))
	s.ObserveISR("orders", 0, 3)
	if !s.PendingISRShrink("orders", 0) {
		t.Fatal("want the logged shrink pending while the metadata still says ISR 3")
	}
}

// ISR changes the log does not show (the controller fenced a follower) are
// counted from the admin API's observations, once; the ones it shows are
// not counted twice, even when the log line comes after the Metadata answer.
func TestStoreCountsISRChangesTheLogDoesNotShow(t *testing.T) {
	s := NewStore(nil)
	counters := func() (uint64, uint64) {
		p := partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}]
		return p.Counters[ISRShrinks], p.Counters[ISRExpands]
	}
	s.ObserveISR("orders", 0, 3)
	s.ObserveISR("orders", 0, 2) // fenced: no log line
	if sh, _ := counters(); sh != 0 {
		t.Fatalf("want the change decided one observation later, got %d shrinks", sh)
	}
	s.ObserveISR("orders", 0, 2)
	if sh, ex := counters(); sh != 1 || ex != 0 {
		t.Fatalf("want 1 inferred shrink, got %d shrinks, %d expands", sh, ex)
	}
	// An expansion logged just after the Metadata answer that showed it.
	s.ObserveISR("orders", 0, 3)
	applyLines(t, s, line(isrUpd, "1", "orders-0", "1,2", "5"), line(isrUpd, "2", "orders-0", "1,2,3", "6"))
	s.ObserveISR("orders", 0, 3)
	if sh, ex := counters(); sh != 1 || ex != 1 {
		t.Errorf("want the logged expansion counted once, got %d shrinks, %d expands", sh, ex)
	}
}

// TestStoreCountsLoweredHighWatermarks: the old leader's WARN on its return
// is counted per partition, with the offsets it gave up (issue 20).
func TestStoreCountsLoweredHighWatermarks(t *testing.T) {
	s := NewStore(nil)
	const warn = "[2026-11-30 10:00:0%s,000] WARN [UnifiedLog partition=%s, dir=/var/kafka] Non-monotonic update of high watermark from (offset=%s, segment=[0:1]) to (offset=%s, segment=[0:1]) (org.apache.kafka.storage.internals.log.UnifiedLog)"
	applyLines(t, s,
		line(warn, "1", "orders-0", "3415", "1303"),
		line(warn, "2", "orders-1", "20", "10"),
		line(warn, "3", "orders-0", "1400", "1390"),
	)
	got := partitions(s)
	for k, want := range map[logparse.PartitionKey][2]uint64{
		{Topic: "orders", Partition: 0}: {2, 2112 + 10},
		{Topic: "orders", Partition: 1}: {1, 10},
	} {
		c := got[k].Counters
		if c[HWLowered] != want[0] || c[HWLoweredOffsets] != want[1] {
			t.Errorf("%v: lowered %d, offsets %d; want %d, %d", k, c[HWLowered], c[HWLoweredOffsets], want[0], want[1])
		}
	}
	if p := got[logparse.PartitionKey{Topic: "orders", Partition: 0}]; !p.HasHW || p.HW != 1390 {
		t.Errorf("orders-0 HW %d (%v), want 1390", p.HW, p.HasHW)
	}
}

// TestStoreLogBrokerID: the broker id the lines name is this broker's, until
// lines name a second one (the logs of several brokers).
func TestStoreLogBrokerID(t *testing.T) {
	s := NewStore(nil)
	if id, ok := s.LogBrokerID(); ok {
		t.Errorf("no line yet: want no broker id, got %d", id)
	}
	applyLines(t, s, line(isrUpd, "1", "orders-0", "1,2,3", "5"), line(isrUpd, "2", "orders-1", "1,2", "6"))
	if id, ok := s.LogBrokerID(); !ok || id != 1 {
		t.Errorf("want broker 1 from its lines, got %d %v", id, ok)
	}
	applyLines(t, s, strings.Replace(line(isrUpd, "3", "orders-0", "1,2,3", "7"), "broker=1", "broker=2", 1))
	if id, ok := s.LogBrokerID(); ok {
		t.Errorf("lines of brokers 1 and 2: want no broker id, got %d", id)
	}
}

// TestStoreLogDirs: a directory the broker stopped serving is offline until
// the broker starts again, then online until it fails anew; the set of
// directories is bounded.
func TestStoreLogDirs(t *testing.T) {
	const (
		stopping = "[2026-12-02 03:37:29,858] WARN [ReplicaManager broker=3] Stopping serving replicas in dir %s with uuid Optional[7E_aR-ZDcublVgBOR3kSyw] because the log directory has failed. (kafka.server.ReplicaManager)"
		starting = "[2026-12-02 03:38:00,610] INFO [BrokerServer id=3] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)"
	)
	dirs := func(s *Store) string {
		var snap Snapshot
		s.Snapshot(&snap)
		var b strings.Builder
		for _, d := range snap.LogDirs {
			b.WriteString(d.Path + "=" + strconv.FormatBool(d.Offline) + " ")
		}
		return b.String()
	}
	s := NewStore(nil)
	if got := dirs(s); got != "" {
		t.Errorf("a healthy broker: want no directory, got %s", got)
	}
	applyLines(t, s, line(stopping, "/data/b"), line(stopping, "/data/a"))
	if got, want := dirs(s), "/data/a=true /data/b=true "; got != want {
		t.Errorf("after the failures: want %s, got %s", want, got)
	}
	applyLines(t, s, starting)
	if got, want := dirs(s), "/data/a=false /data/b=false "; got != want {
		t.Errorf("after the start: want %s, got %s", want, got)
	}
	applyLines(t, s, line(stopping, "/data/b"))
	if got, want := dirs(s), "/data/a=false /data/b=true "; got != want {
		t.Errorf("failed anew: want %s, got %s", want, got)
	}
	// Another broker's start (logs of several brokers in one sidecar) is not
	// this one's; ZooKeeper mode's start names no broker and resets all.
	applyLines(t, s, "[2026-12-02 03:39:00,000] INFO [BrokerServer id=4] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)")
	if got, want := dirs(s), "/data/a=false /data/b=true "; got != want {
		t.Errorf("broker 4 started: want %s, got %s", want, got)
	}
	applyLines(t, s, "[2026-12-02 03:40:00,000] INFO starting (kafka.server.KafkaServer)")
	if got, want := dirs(s), "/data/a=false /data/b=false "; got != want {
		t.Errorf("a ZooKeeper-mode start: want %s, got %s", want, got)
	}
	for i := range 2 * maxLogDirs {
		applyLines(t, s, line(stopping, "/junk/"+strconv.Itoa(i)))
	}
	var snap Snapshot
	s.Snapshot(&snap)
	if len(snap.LogDirs) != maxLogDirs {
		t.Errorf("want at most %d directories, got %d", maxLogDirs, len(snap.LogDirs))
	}
}

// A shrink the controller rejected never changed Kafka's ISR: it is no
// shrink, and no longer pending; the commit that follows a retry counts it.
func TestStoreCountsShrinkOnCommit(t *testing.T) {
	const rejected = "[2026-11-30 10:00:0%s,000] DEBUG [Partition %s broker=1] Failed to alter partition to PendingShrinkIsr(outOfSyncReplicaIds=Set(2, 3), sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=5)), leaderRecoveryState=RECOVERED, partitionEpoch=4), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED)) because the partition epoch is invalid. Partition state may be out of sync, awaiting new the latest metadata. (kafka.cluster.Partition)"
	s := NewStore(nil)
	counters := func() Counters { return partitions(s)[logparse.PartitionKey{Topic: "orders", Partition: 0}].Counters }
	applyLines(t, s, line(isrUpd, "1", "orders-0", "1,2,3", "5"), line(shrinking, "2", "orders-0"), line(rejected, "3", "orders-0"))
	if c := counters(); c[ISRShrinks] != 0 || c[AlterPartitionFailures] != 1 {
		t.Errorf("want a rejected shrink not counted as a shrink (one failure), got %d shrinks, %d failures", c[ISRShrinks], c[AlterPartitionFailures])
	}
	s.ObserveISR("orders", 0, 3)
	if s.PendingISRShrink("orders", 0) {
		t.Error("want no pending shrink once the controller rejected it")
	}
	applyLines(t, s, line(shrinking, "4", "orders-0"))
	if c := counters(); c[ISRShrinks] != 0 {
		t.Errorf("want a proposed shrink not counted before its commit, got %d", c[ISRShrinks])
	}
	applyLines(t, s, line(isrUpd, "5", "orders-0", "1", "6"))
	if c := counters(); c[ISRShrinks] != 1 {
		t.Errorf("want the committed shrink counted once, got %d", c[ISRShrinks])
	}
}
