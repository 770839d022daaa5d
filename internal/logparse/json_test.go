package logparse

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONEscapes checks that untrusted text (topic names come from
// the log) always yields valid JSON.
func TestAppendJSONEscapes(t *testing.T) {
	ev := Event{Type: AlterPartitionFailed, Topic: "we\"ird\\\x01\xff-topic", Reason: "a\nb", File: "/var/log/kafka/server.log"}
	out := AppendJSON(nil, &ev)
	want := `{"type":"alter_partition_failed","level":"","logger":"","broker":0,"topic":"we\"ird\\\u0001\ufffd-topic","partition":0,"file":"/var/log/kafka/server.log","line":0,"reason":"a\u000ab"}`
	if want != string(out) {
		t.Errorf("want\n%s\ngot\n%s", want, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("want valid JSON, got %v", err)
	}
}
