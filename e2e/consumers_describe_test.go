package e2e

import (
	"reflect"
	"testing"
)

// kafka-consumer-groups --describe as Kafka 4.4.0 and 3.9.1 print it: a blank
// line, the header, one row per partition; a partition without a committed
// offset shows "-".
func TestParseConsumerGroupsDescribe(t *testing.T) {
	out := `
GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                                  HOST            CLIENT-ID
paused-1        paused          0          188             323             135             sarama-5d0e7f1e-8c1b-4a55-9a8e-2b1f0c7a9d11 /127.0.0.1      sarama
paused-1        paused          1          -               40              -               sarama-5d0e7f1e-8c1b-4a55-9a8e-2b1f0c7a9d11 /127.0.0.1      sarama
`
	got, err := parseConsumerGroupsDescribe(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []describeRow{{Group: "paused-1", Topic: "paused", Partition: 0, CurrentOffset: 188, LogEndOffset: 323, Lag: 135}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseConsumerGroupsDescribe("Error: Consumer group 'x' does not exist.\n"); err == nil {
		t.Error("no header: want an error")
	}
	if _, err := parseConsumerGroupsDescribe("GROUP TOPIC PARTITION CURRENT-OFFSET LAG\n"); err == nil {
		t.Error("a header without LOG-END-OFFSET: want an error")
	}
}
