package collector

import (
	"github.com/prometheus/client_golang/prometheus"
)

// FilesCollector exports the followers' self-metrics: how much of each file was
// read, rotations and truncations followed, and when a line last arrived (a
// broker that stopped logging, or a follower stuck on a dead file, shows here).
type FilesCollector struct {
	files []*LogFile

	records, malformed, lines, bytes, rotations, truncations *prometheus.Desc
	position, lastRead, open                                 *prometheus.Desc
}

// NewFilesCollector renders the given followers.
func NewFilesCollector(files []*LogFile) *FilesCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "log", name), help, []string{"file"}, nil)
	}
	return &FilesCollector{
		files:       files,
		records:     d("records_total", "Log records read (a header line plus its continuation lines)."),
		malformed:   d("records_malformed_total", "Physical lines dropped as malformed: binary junk, continuation lines without a header, parts of over-long lines."),
		lines:       d("lines_total", "Physical lines read."),
		bytes:       d("bytes_total", "Bytes read."),
		rotations:   d("file_rotations_total", "Rename+create rotations followed (log4j's hourly roll)."),
		truncations: d("file_truncations_total", "copytruncate-style truncations detected (reading restarted at offset 0)."),
		position:    d("file_position_bytes", "Read offset in the file currently followed."),
		lastRead:    d("file_last_read_timestamp_seconds", "Wall time the last line was read from the file (stale-log detection)."),
		open:        d("file_open", "1 when the file (or stdin) is open and followed, 0 while waiting for it to appear."),
	}
}

// Describe implements prometheus.Collector.
func (c *FilesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.records, c.malformed, c.lines, c.bytes, c.rotations, c.truncations, c.position, c.lastRead, c.open} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *FilesCollector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.files {
		st := f.follower.Stats()
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), f.Path)
		}
		counter(c.records, f.records.Load())
		counter(c.malformed, f.malformed.Load()) // the Splitter counted the follower's cut lines too
		counter(c.lines, st.Lines)
		counter(c.bytes, st.Bytes)
		counter(c.rotations, st.Rotations)
		counter(c.truncations, st.Truncations)
		ch <- prometheus.MustNewConstMetric(c.position, prometheus.GaugeValue, float64(st.Offset), f.Path)
		if !st.LastRead.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.lastRead, prometheus.GaugeValue, unixSeconds(st.LastRead), f.Path)
		}
		open := 0.0
		if st.Ready {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, open, f.Path)
	}
}
