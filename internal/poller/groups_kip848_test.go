package poller

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// TestGroupsKIP848: Kafka's DescribeGroups does not describe a KIP-848
// (group.protocol=consumer) group: before v6 it answers Dead with no
// member, from v6 GROUP_ID_NOT_FOUND (seen on Kafka 4.4.0,
// TestConsumerGroupKIP848). Such a group is asked again with
// ConsumerGroupDescribe; its offsets are read either way, and a state that
// no describe gives is unknown, never Dead with 0 members.
func TestGroupsKIP848(t *testing.T) {
	for _, c := range []struct {
		name      string
		described *kerr.Error // DescribeGroups' error code for the group; nil: Dead without error
		answer    *kerr.Error // ConsumerGroupDescribe's; nil: Stable, 2 members
		want      string
		errors    uint64
	}{
		{"described by ConsumerGroupDescribe", nil, nil, "nextgen(Stable,2): orders/0=7 3 0 false 0", 0},
		{"not found by DescribeGroups v6, described", kerr.GroupIDNotFound, nil, "nextgen(Stable,2): orders/0=7 3 0 false 0", 0},
		{"unknown to both: a classic group gone", nil, kerr.GroupIDNotFound, "nextgen(Dead,0): orders/0=7 3 0 false 0", 0},
		{"refused: unknown, not Dead", nil, kerr.GroupAuthorizationFailed, "nextgen(,0): orders/0=7 3 0 false 0", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fakekafka.New(t)
			f.CreateTopic("orders", nil, 0)
			f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 10, LEO: 10})
			f.CommitOffsets("nextgen", map[logparse.PartitionKey]int64{key("orders", 0): 7})
			f.C.ControlKey(int16(kmsg.DescribeGroups), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				f.C.KeepControl()
				req := kreq.(*kmsg.DescribeGroupsRequest)
				resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
				resp.Version = req.Version
				for _, g := range req.Groups {
					d := kmsg.NewDescribeGroupsResponseGroup()
					d.Group, d.State = g, "Dead"
					if c.described != nil {
						d.ErrorCode = c.described.Code
					}
					resp.Groups = append(resp.Groups, d)
				}
				return resp, nil, true
			})
			f.C.ControlKey(int16(kmsg.ConsumerGroupDescribe), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				f.C.KeepControl()
				req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
				resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
				resp.Version = req.Version
				for _, g := range req.Groups {
					d := kmsg.NewConsumerGroupDescribeResponseGroup()
					d.Group = g
					if c.answer != nil {
						d.ErrorCode = c.answer.Code
					} else {
						d.State = "Stable"
						d.Members = make([]kmsg.ConsumerGroupDescribeResponseGroupMember, 2)
					}
					resp.Groups = append(resp.Groups, d)
				}
				return resp, nil, true
			})
			a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
			a.refresh(context.Background())
			s := a.Snapshot()
			expect(t, c.name, groupTable(s), c.want)
			if got := s.RequestErrors[RequestDescribeGroups]; got != c.errors {
				t.Errorf("describe_groups errors %d, want %d", got, c.errors)
			}
		})
	}
}

// TestGroupsClassicNoConsumerGroupDescribe: where every group is classic,
// no ConsumerGroupDescribe is sent.
func TestGroupsClassicNoConsumerGroupDescribe(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 1})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	f.RequestCounts()
	a.refresh(context.Background())
	if got := f.RequestCounts(); got[kmsg.DescribeGroups] != 1 || got[kmsg.ConsumerGroupDescribe] != 0 {
		t.Errorf("want 1 DescribeGroups and no ConsumerGroupDescribe, got %v", got)
	}
	if s := groupTable(a.Snapshot()); s != "billing(Empty,0): orders/0=1 0 0 false 0" {
		t.Errorf("got %s", s)
	}
}
