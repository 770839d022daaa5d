package stack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Alert is one alert of an Alertmanager webhook notification.
type Alert struct {
	Status   string            `json:"status"` // firing | resolved
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
	EndsAt   time.Time         `json:"endsAt"`
}

// Notification is one Alertmanager webhook call (payload version 4).
type Notification struct {
	Received time.Time         `json:"-"`
	Status   string            `json:"status"`
	Receiver string            `json:"receiver"`
	Group    map[string]string `json:"groupLabels"`
	Alerts   []Alert           `json:"alerts"`
}

// Webhook is an http.Handler recording the notifications Alertmanager sends
// to a webhook receiver. Serve it with httptest.NewServer.
type Webhook struct {
	mu     sync.Mutex
	notes  []Notification
	signal chan struct{} // closed and replaced on every notification
}

// NewWebhook returns an empty receiver.
func NewWebhook() *Webhook { return &Webhook{signal: make(chan struct{})} }

// ServeHTTP records one notification.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var n Notification
	if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	n.Received = time.Now()
	w.mu.Lock()
	w.notes = append(w.notes, n)
	close(w.signal)
	w.signal = make(chan struct{})
	w.mu.Unlock()
}

// Notifications returns a copy of what was received so far and a channel
// that is closed when the next notification arrives.
func (w *Webhook) Notifications() ([]Notification, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Notification(nil), w.notes...), w.signal
}

// Alerts flattens the notifications received so far into their alerts.
func (w *Webhook) Alerts() []Alert {
	notes, _ := w.Notifications()
	var alerts []Alert
	for _, n := range notes {
		alerts = append(alerts, n.Alerts...)
	}
	return alerts
}

// String lists the notifications one per line, for test logs.
func (n Notification) String() string {
	var alerts []string
	for _, a := range n.Alerts {
		alerts = append(alerts, a.Status+" "+labelString(a.Labels))
	}
	return fmt.Sprintf("%s %s %s: %s", n.Received.Format("15:04:05.000"), n.Status,
		labelString(n.Group), strings.Join(alerts, "; "))
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
