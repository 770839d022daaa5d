package metrics

import (
	"strconv"
	"time"
)

// idLabels are the label values of the usual partition and broker ids,
// formatted once rather than on every scrape.
var idLabels = func() []string {
	names := make([]string, 4096)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	return names
}()

// idLabel is the label value of a partition or broker id.
func idLabel(id int32) string {
	if id >= 0 && int(id) < len(idLabels) {
		return idLabels[id]
	}
	return strconv.FormatInt(int64(id), 10)
}

// b2f is a column value of a condition: 1 or 0.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is a column value of a time.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
