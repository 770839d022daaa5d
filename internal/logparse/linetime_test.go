package logparse

import (
	"testing"
	"time"
)

// LineTime reads a record's time from every layout with a timestamp, inside
// any container envelope, and nothing from a line that starts no record.
func TestLineTime(t *testing.T) {
	for line, want := range map[string]string{
		"[2025-10-16 15:57:12,614] INFO x (kafka.server.KafkaServer)":                "2025-10-16T15:57:12.614Z",
		"[2025-10-16 15:57:12,614] INFO x\r":                                         "2025-10-16T15:57:12.614Z",
		"2025-10-16 15:57:12,614 INFO x (kafka.server.KafkaServer) [main]":           "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:12.614+02:00  INFO 42 --- [main] kafka.Kafka : started":    "2025-10-16T13:57:12.614Z",
		"2025-10-16T15:57:13.000000001Z stdout F [2025-10-16 15:57:12,614] INFO x":   "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:13.000000001Z [2025-10-16 15:57:12,614] INFO x":            "2025-10-16T15:57:12.614Z",
		"kafka-1   | [2025-10-16 15:57:12,614] INFO x (kafka.server.KafkaServer)":    "2025-10-16T15:57:12.614Z",
		"2025-10-16 15:57:12,614 [main] INFO  kafka.Kafka - started":                 "2025-10-16T15:57:12.614Z",
		"[2025-10-16 15:57:12,614] INFO  [main] x (kafka.server.KafkaServer)":        "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:12,614 INFO x (kafka.server.KafkaServer) [main]":           "2025-10-16T15:57:12.614Z",
		"\x1b[32m[2025-10-16 15:57:12,614] INFO x (kafka.server.KafkaServer)\x1b[0m": "2025-10-16T15:57:12.614Z",
		`{"@timestamp":"2025-10-16T15:57:12.614Z","log.level":"INFO","message":"x"}`: "2025-10-16T15:57:12.614Z",
		"2025-10-16T15:57:13.000000001Z stdout F [2025-10-16 1":                      "",
		"[main] INFO kafka.Kafka - started":                                          "",
		"\tat kafka.Foo(Foo.scala:1)":                                                "",
		"[2025-10-16 15:57:1":                                                        "",
		"[2025-13-16 15:57:12,614] INFO x":                                           "",
		"":                                                                           "",
	} {
		got, ok := LineTime([]byte(line), time.UTC)
		if ok != (want != "") || ok && got.UTC().Format(time.RFC3339Nano) != want {
			t.Errorf("LineTime(%q) = %v, %v; want %q", line, got, ok, want)
		}
	}
}
