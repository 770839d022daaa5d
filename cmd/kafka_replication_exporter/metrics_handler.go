package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector"
)

// metricsHandler serves the telemetry path in place of promhttp.HandlerFor:
// the registry's families (build info, Go and process) are gathered, and
// every kafka_replication_* family is written by collector.WriteText, because
// at tens of thousands of partitions Gather plus expfmt cost far more CPU
// and memory than the scrape interval allows (docs/design.md). It keeps promhttp's behaviour: max-in-flight, gzip,
// name[] selection, and ContinueOnError (a registry error is logged and what
// was gathered is still served).
//
// It always answers in the text format 0.0.4, because that is the one format
// the writer produces and every Prometheus version reads it; the exporter has
// no histograms or exemplars that protobuf or OpenMetrics would carry better.
type metricsHandler struct {
	gatherer prometheus.Gatherer
	direct   []collector.TableSource
	logger   *slog.Logger
	inFlight chan struct{} // nil = no limit
}

func newMetricsHandler(g prometheus.Gatherer, direct []collector.TableSource, logger *slog.Logger, maxRequests int) *metricsHandler {
	h := &metricsHandler{gatherer: g, direct: direct, logger: logger}
	if maxRequests > 0 {
		h.inFlight = make(chan struct{}, maxRequests)
	}
	return h
}

// gzipPool reuses compressors between scrapes. BestSpeed, not promhttp's
// default level, and klauspost/compress (already in the build through
// sarama) rather than compress/gzip: a 100k-partition scrape is over 100 MB
// of text, and the default level made compression most of its cost for a
// slightly smaller body (docs/benchmarks.md, "/metrics render").
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

func (h *metricsHandler) ServeHTTP(rsp http.ResponseWriter, req *http.Request) {
	if h.inFlight != nil {
		select {
		case h.inFlight <- struct{}{}:
			defer func() { <-h.inFlight }()
		default:
			http.Error(rsp, fmt.Sprintf("Limit of concurrent requests reached (%d), try again later.", cap(h.inFlight)), http.StatusServiceUnavailable)
			return
		}
	}
	mfs, err := h.gatherer.Gather()
	if err != nil {
		h.logger.Error("Error gathering metrics", "err", err)
		if len(mfs) == 0 && len(h.direct) == 0 {
			http.Error(rsp, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
	}

	// name[]=… selects families, as promhttp does.
	var keep func(string) bool
	if req.URL != nil {
		if names := req.URL.Query()["name[]"]; len(names) > 0 {
			set := make(map[string]struct{}, len(names))
			for _, n := range names {
				set[n] = struct{}{}
			}
			keep = func(name string) bool { _, ok := set[name]; return ok }
		}
	}

	hdr := rsp.Header()
	hdr.Add("Vary", "Accept-Encoding")
	hdr.Set("Content-Type", string(expfmt.FmtText))
	var w io.Writer = rsp
	if acceptsGzip(req.Header) {
		hdr.Set("Content-Encoding", "gzip")
		gz := gzipPool.Get().(*gzip.Writer)
		gz.Reset(rsp)
		defer func() {
			gz.Close()
			gz.Reset(nil)
			gzipPool.Put(gz)
		}()
		w = gz
	}
	if err := collector.WriteText(w, mfs, keep, h.direct...); err != nil {
		h.logger.Error("Error encoding and sending metrics", "err", err)
	}
}

// acceptsGzip decides as promhttp does (gddo's NegotiateContentEncoding over
// the offers identity, gzip): the offer with the highest q wins, identity on
// a tie, and no compression when nothing acceptable is listed.
func acceptsGzip(h http.Header) bool {
	best, bestQ := "identity", -1.0
	specs := acceptEncodings(h)
	for _, offer := range []string{"identity", "gzip"} {
		for _, s := range specs {
			if s.q > bestQ && (s.value == "*" || s.value == offer) {
				best, bestQ = offer, s.q
			}
		}
	}
	return best == "gzip" && bestQ > 0
}

type acceptSpec struct {
	value string
	q     float64
}

func acceptEncodings(h http.Header) []acceptSpec {
	var specs []acceptSpec
	for _, v := range h.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			value, params, _ := strings.Cut(part, ";")
			value = strings.TrimSpace(value)
			if value == "" {
				continue
			}
			q := 1.0
			if params = strings.TrimSpace(params); params != "" {
				qs, ok := strings.CutPrefix(params, "q=")
				if !ok {
					continue
				}
				f, err := strconv.ParseFloat(strings.TrimSpace(qs), 64)
				if err != nil || f < 0 || f > 1 {
					continue
				}
				q = f
			}
			specs = append(specs, acceptSpec{value, q})
		}
	}
	return specs
}
