package stack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWebhookRecords(t *testing.T) {
	w := NewWebhook()
	srv := httptest.NewServer(w)
	defer srv.Close()
	_, next := w.Notifications()

	body := `{"version":"4","status":"resolved","receiver":"webhook","groupLabels":{"alertname":"A","topic":"t"},
	  "alerts":[{"status":"resolved","labels":{"alertname":"A","topic":"t","cluster":"local"},"startsAt":"2026-01-01T00:00:00Z"}]}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-next:
	default:
		t.Fatal("notification channel not closed after a notification")
	}
	alerts := w.Alerts()
	if len(alerts) != 1 || alerts[0].Status != "resolved" || alerts[0].Labels["topic"] != "t" {
		t.Fatalf("alerts = %+v", alerts)
	}

	resp, err = http.Post(srv.URL, "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: %s, want 400", resp.Status)
	}
	if notes, _ := w.Notifications(); len(notes) != 1 {
		t.Errorf("%d notifications recorded, want 1", len(notes))
	}
}
