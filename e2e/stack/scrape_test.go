package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestScrapeValue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`# TYPE kafka_replication_partition_leader gauge
kafka_replication_partition_leader{partition="0",topic="a"} 1
kafka_replication_partition_leader{partition="1",topic="a"} -1
# TYPE kafka_replication_up gauge
kafka_replication_up 1
`))
	}))
	defer srv.Close()
	m, err := Scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Value("kafka_replication_partition_leader", map[string]string{"topic": "a", "partition": "1"}); !ok || v != -1 {
		t.Errorf("leader a/1 = %v, %v; want -1, true", v, ok)
	}
	if _, ok := m.Value("kafka_replication_partition_leader", map[string]string{"topic": "a"}); ok {
		t.Error("Value matched two series as one")
	}
	if n := m.Count("kafka_replication_partition_leader", map[string]string{"topic": "b"}); n != 0 {
		t.Errorf("Count(topic b) = %d, want 0", n)
	}
	if v, ok := m.Value("kafka_replication_up", nil); !ok || v != 1 {
		t.Errorf("up = %v, %v", v, ok)
	}
}
