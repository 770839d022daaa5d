package logparse

import (
	"strings"
	"testing"
	"time"
)

// topicForms are every line form that names a topic, with TOPIC where the
// name goes. wholeName marks the forms whose topic is delimited by something
// other than a space, so that a name with a space in it is read whole (and
// counted malformed) rather than cut short (and not ours).
var topicForms = []struct {
	name      string
	first     string
	cont      string
	wholeName bool
}{
	{"partition prefix", line("DEBUG", "[Partition TOPIC-3 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2])", partitionLogger), "", true},
	{"leader start", line("INFO", "[Broker id=1] Leader TOPIC-3 with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch 4 from offset 1200 with partition epoch 9, high watermark 1200, ISR [2,1,3], adding replicas [] and removing replicas []. Previous leader None and previous leader epoch was -1.", stateLogger), "", false},
	{"follower start", line("INFO", "[Broker id=1] Follower TOPIC-3 starts at leader epoch 5 from offset 100 with partition epoch 9 and high watermark 1200. Current leader is 2.", stateLogger), "", false},
	{"recovering", line("INFO", "[Broker id=2] The topic partition TOPIC-3 was marked as RECOVERING. Marking the topic partition as RECOVERED.", stateLogger), "", false},
	{"unclean controller", line("INFO", "[QuorumController id=1] UNCLEAN partition change for TOPIC-3 with topic ID FixedId000000000000001: isr: [1] -> [2], leader: -1 -> 2, partitionEpoch: 2 -> 3", "org.apache.kafka.controller.ReplicationControlManager"), "", false},
	{"fetcher truncation", line("INFO", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition TOPIC-3 with TruncationState(offset=300, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=3, leaderEpoch=3, endOffset=300)", fetcherLogger), "", false},
	{"reset fetch offset", line("WARN", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Reset fetch offset for partition TOPIC-3 from 120 to current leader's latest offset 100", fetcherLogger), "", false},
	{"truncation below hw", line("WARN", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating TOPIC-3 to offset 40 below high watermark 44", fetcherLogger), "", false},
	{"log truncation", line("INFO", "[UnifiedLog partition=TOPIC-3, dir=/var/lib/kafka] Truncating to offset 5", "kafka.log.UnifiedLog"), "", true},
	{"epoch cache", line("DEBUG", "[LeaderEpochCache TOPIC-3] Appended new epoch entry EpochEntry(epoch=6, startOffset=1234). Cache now contains 3 entries.", "kafka.server.epoch.LeaderEpochFileCache"), "", true},
	{
		"produce rejected", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition AMNt6PcpRZOktSh6v-u00A:TOPIC-3", replicaManager),
		notEnoughReplicas + "The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition TOPIC-3, live replica(s) broker.id are : Set(1)", false,
	},
}

// TestTopicNamesValidated: a topic Kafka could not have created never
// reaches an event, whatever line form names it, and the record is counted
// as malformed; the longest and oddest legal names still parse.
func TestTopicNamesValidated(t *testing.T) {
	legal := []string{"orders", "orders.v1_eu-west", "__consumer_offsets", strings.Repeat("a", maxTopicLen), "A-1"}
	illegal := []struct {
		name, topic string
		space       bool
	}{
		{"invalid UTF-8", "ord\xff\xfeers", false},
		{"NUL", "ord\x00ers", false},
		{"escape sequence", "\x1b[31mred", false},
		{"valid UTF-8 but not legal", "ordérs", false},
		{"slash", "orders/eu", false},
		{"quote", `a"b`, false},
		{"250 bytes", strings.Repeat("a", maxTopicLen+1), false},
		{"10,000 bytes", strings.Repeat("o", 10000), false},
		{"space", "ord ers", true},
	}
	for _, form := range topicForms {
		t.Run(form.name, func(t *testing.T) {
			for _, topic := range legal {
				p := NewParser(time.UTC)
				rec := Record{First: []byte(strings.ReplaceAll(form.first, "TOPIC", topic)), Cont: []byte(strings.ReplaceAll(form.cont, "TOPIC", topic)), Line: 1, Lines: 2}
				ev, ok := p.Parse(rec)
				if !ok || ev.Topic != topic || ev.Partition != 3 {
					t.Errorf("legal topic %.20q…: want an event on %s-3, got %v %q-%d", topic, topic, ok, ev.Topic, ev.Partition)
				}
				if p.Malformed() != 0 {
					t.Errorf("legal topic %.20q…: want 0 malformed, got %d", topic, p.Malformed())
				}
			}
			for _, bad := range illegal {
				p := NewParser(time.UTC)
				rec := Record{First: []byte(strings.ReplaceAll(form.first, "TOPIC", bad.topic)), Cont: []byte(strings.ReplaceAll(form.cont, "TOPIC", bad.topic)), Line: 1, Lines: 2}
				for range 2 { // the second time through the partition memo
					if ev, ok := p.Parse(rec); ok {
						t.Errorf("%s: want no event, got %v on %q", bad.name, ev.Type, ev.Topic)
					}
				}
				want := int64(2)
				if bad.space && !form.wholeName {
					want = 0 // cut at the space: the line is not ours, not malformed
				}
				if p.Malformed() != want {
					t.Errorf("%s: want %d malformed, got %d", bad.name, want, p.Malformed())
				}
			}
		})
	}
}

// TestValidTopic pins the rule itself: Kafka's [a-zA-Z0-9._-], 1 to 249 bytes.
func TestValidTopic(t *testing.T) {
	for c := range 256 {
		legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if got := validTopic([]byte{byte(c)}); got != legal {
			t.Errorf("byte %#x: want %v, got %v", c, legal, got)
		}
		if got := ValidTopicName(string([]byte{byte(c)})); got != legal {
			t.Errorf("ValidTopicName, byte %#x: want %v, got %v", c, legal, got)
		}
	}
	for n, want := range map[int]bool{0: false, 1: true, maxTopicLen: true, maxTopicLen + 1: false} {
		if got := validTopic([]byte(strings.Repeat("t", n))); got != want {
			t.Errorf("length %d: want %v, got %v", n, want, got)
		}
		if got := ValidTopicName(strings.Repeat("t", n)); got != want {
			t.Errorf("ValidTopicName, length %d: want %v, got %v", n, want, got)
		}
	}
}
