package poller

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// commitGroups commits offset 1 on orders/0 for groups group-0000 … group-(n-1),
// as an admin tool does, a few at a time.
func commitGroups(t *testing.T, f *fakekafka.Kafka, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.C.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var (
		wg   sync.WaitGroup
		next = make(chan int)
		mu   sync.Mutex
		errs []error
	)
	for range 16 {
		wg.Go(func() {
			for g := range next {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = groupName(g), -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "orders"
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Offset = 1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				resp, err := req.RequestWith(context.Background(), cl)
				if err == nil && resp.Topics[0].Partitions[0].ErrorCode != 0 {
					err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("commit %s: %w", req.Group, err))
					mu.Unlock()
				}
			}
		})
	}
	for g := range n {
		next <- g
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
}

func groupName(g int) string { return fmt.Sprintf("group-%04d", g) }

// TestGroupsSlowCoordinatorManyGroups: 3,000 groups on coordinators that
// take 6 ms per OffsetFetch are all read within one refresh, and the
// coordinators stay responsive: their offsets do not cost a request each.
func TestGroupsSlowCoordinatorManyGroups(t *testing.T) {
	const groups = 3000
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2)
	commitGroups(t, f, groups)
	f.SetDelay(kmsg.OffsetFetch, 6*time.Millisecond)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) {
		withGroups(".*", "")(c)
		c.RequestTimeout = 3 * time.Second
	})
	for i := range 2 {
		took := timedRefresh(a)
		s := a.Snapshot()
		if len(s.Groups) != groups {
			t.Errorf("refresh %d (%v): want all %d groups read, got %d", i, took, groups, len(s.Groups))
		}
		expect(t, fmt.Sprint("brokers, refresh ", i), brokersOf(s), "0=true 1=true 2=true")
		checkUnread(t, fmt.Sprint("refresh ", i), s, groups, "")
	}
}

// TestGroupsRecoverAfterPause: every broker pauses for longer than a
// refresh, then answers again (each OffsetFetch in 2 ms). The next
// refreshes read every group again and find every broker responsive: the
// short deadline of a broker that did not answer last time bounds each of
// its requests, not the whole of the exporter's own work with it.
func TestGroupsRecoverAfterPause(t *testing.T) {
	const groups = 3000
	fz := newFreezer(t)
	f := fakekafka.New(t, kfake.ListenFn(fz.listen))
	f.CreateTopic("orders", nil, 0, 1, 2)
	commitGroups(t, f, groups)
	f.SetDelay(kmsg.OffsetFetch, 2*time.Millisecond)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) {
		withGroups(".*", "")(c)
		c.RequestTimeout = 3 * time.Second
	})
	a.refresh(context.Background())
	if n := len(a.Snapshot().Groups); n != groups {
		t.Fatalf("before the pause: want %d groups, got %d", groups, n)
	}
	for id := range int32(3) {
		fz.set(id, true)
	}
	a.refresh(context.Background())
	if s := a.Snapshot(); s.Up {
		t.Errorf("during the pause: want up 0, got brokers %s", brokersOf(s))
	}
	fz.set(-1, false)
	time.Sleep(100 * time.Millisecond) // the late answers arrive
	for i := range 3 {
		took := timedRefresh(a)
		s := a.Snapshot()
		t.Logf("after the pause, refresh %d took %v: %d groups, brokers %s", i, took, len(s.Groups), brokersOf(s))
		if i == 0 {
			continue // the brokers answered nothing last time: probed, and may be caught mid-recovery
		}
		if len(s.Groups) != groups {
			t.Errorf("after the pause, refresh %d: want all %d groups read, got %d", i, groups, len(s.Groups))
		}
		expect(t, fmt.Sprint("brokers after the pause, refresh ", i), brokersOf(s), "0=true 1=true 2=true")
		checkUnread(t, fmt.Sprint("after the pause, refresh ", i), s, groups, "")
	}
}

// TestGroupsOneGroupRefused: one group of 50 whose offsets its coordinator
// will not give (COORDINATOR_LOAD_IN_PROGRESS) is the only one left out,
// refresh after refresh, and it is counted unread.
func TestGroupsOneGroupRefused(t *testing.T) {
	const groups = 50
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2)
	commitGroups(t, f, groups)
	bad := groupName(17)
	fault := f.C.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: bad, Err: kerr.CoordinatorLoadInProgress, Count: -1})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{Logger: logger}, withGroups(".*", ""))
	for i := range 5 {
		a.refresh(context.Background())
		s := a.Snapshot()
		if len(s.Groups) != groups-1 || hasGroup(s, bad) {
			t.Errorf("refresh %d: want the %d groups but %s read, got %d (%s among them: %v)", i, groups-1, bad, len(s.Groups), bad, hasGroup(s, bad))
		}
		expect(t, fmt.Sprint("brokers, refresh ", i), brokersOf(s), "0=true 1=true 2=true")
		checkUnread(t, fmt.Sprint("refresh ", i), s, groups, "error_code=1")
	}
	fault.Remove()
	a.refresh(context.Background())
	checkUnread(t, "once the coordinator answers", a.Snapshot(), groups, "")
	if n := strings.Count(logs.String(), "level=WARN msg=\"Some consumer groups could not be read"); n != 1 {
		t.Errorf("want one WARN for the 5 refreshes with the group unread, got %d:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "error_code=1") || !strings.Contains(logs.String(), `msg="Every listed consumer group is read again"`) {
		t.Errorf("want the WARN to count error_code=1, and an INFO once every group is read, got:\n%s", logs.String())
	}
}

// TestGroupsOneGroupHangs: one group of 50 whose OffsetFetch its
// coordinator never answers is the only one left out, and the refresh
// still ends within its budget.
func TestGroupsOneGroupHangs(t *testing.T) {
	const groups = 50
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2)
	commitGroups(t, f, groups)
	bad := groupName(17)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.C.ControlKey(int16(kmsg.OffsetFetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		req := kreq.(*kmsg.OffsetFetchRequest)
		asks := req.Group == bad
		for _, g := range req.Groups {
			asks = asks || g.Group == bad
		}
		if asks {
			f.C.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) {
		withGroups(".*", "")(c)
		c.RequestTimeout = 5 * time.Second
	})
	for i := range 3 {
		took := timedRefresh(a)
		s := a.Snapshot()
		if took > 5500*time.Millisecond {
			t.Errorf("refresh %d: want it to end within its 5s budget, took %v", i, took)
		}
		if len(s.Groups) != groups-1 || hasGroup(s, bad) {
			t.Errorf("refresh %d (%v): want the %d groups but %s read, got %d", i, took, groups-1, bad, len(s.Groups))
		}
		checkUnread(t, fmt.Sprint("refresh ", i), s, groups, "no_answer=1")
	}
}

func hasGroup(s *Snapshot, name string) bool {
	for _, g := range s.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

// checkUnread fails unless the snapshot lists listed groups and counts
// unread those of want ("reason=n …", by reason; "" = none).
func checkUnread(t *testing.T, what string, s *Snapshot, listed int, want string) {
	t.Helper()
	got := ""
	for why, n := range s.GroupsUnread {
		if n > 0 {
			if got != "" {
				got += " "
			}
			got += fmt.Sprintf("%s=%d", GroupUnread(why), n)
		}
	}
	if s.GroupsListed != listed || got != want {
		t.Errorf("%s: want %d groups listed and unread %q, got %d and %q", what, listed, want, s.GroupsListed, got)
	}
}

// TestGroupsBeforeKafka30: a broker without OffsetFetch v8 (Kafka 2.8)
// takes one group a request, whether --kafka.version says so or sarama
// finds out from the broker's versions; every group is read either way
// and the broker is responsive.
func TestGroupsBeforeKafka30(t *testing.T) {
	const groups = 30
	for _, version := range []string{"2.8.0", "3.9.0"} {
		t.Run(version, func(t *testing.T) {
			f := fakekafka.New(t, kfake.MaxVersions(kversion.V2_8_0()))
			f.CreateTopic("orders", nil, 0, 1, 2)
			commitGroups(t, f, groups)
			a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) {
				withGroups(".*", "")(c)
				c.Version = version
			})
			for i := range 2 {
				a.refresh(context.Background())
				s := a.Snapshot()
				if len(s.Groups) != groups {
					t.Errorf("refresh %d: want all %d groups read, got %d", i, groups, len(s.Groups))
				}
				expect(t, fmt.Sprint("brokers, refresh ", i), brokersOf(s), "0=true 1=true 2=true")
				checkUnread(t, fmt.Sprint("refresh ", i), s, groups, "")
				if n := s.RequestErrors[RequestOffsetFetch]; n != 0 {
					t.Errorf("refresh %d: want no offset_fetch error, got %d", i, n)
				}
			}
			if got := f.RequestCounts()[kmsg.OffsetFetch]; got < 2*groups {
				t.Errorf("want one OffsetFetch per group, got %d for %d groups in 2 refreshes", got, groups)
			}
		})
	}
}
