package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector"
)

// metricsHandler serves the telemetry path in place of promhttp.HandlerFor:
// the registry's families (build info, Go and process) are gathered, and
// every kafka_replication_* family is written by collector.WriteText, because
// at tens of thousands of partitions Gather plus expfmt cost far more CPU
// and memory than the scrape interval allows (docs/design.md). It keeps
// promhttp's behaviour: max-in-flight, gzip, name[] selection, and
// ContinueOnError (a registry error is logged and what was gathered is still
// served).
//
// It always answers in the text format 0.0.4, because that is the one format
// the writer produces and every Prometheus version reads it; the exporter has
// no histograms or exemplars that protobuf or OpenMetrics would carry better.
//
// A scrape is rendered into memory once and then written: requests that
// arrive while a body is being rendered (same encoding, same name[]) share
// it, read-only, and a client that stops reading holds only the body it
// shares, never a snapshot of the state or a renderer's buffers. When a
// render starts, clients still writing a body two renders old are cut off
// (their write deadline is set to now, as --web.write-timeout would later),
// so however many clients stop reading, at most two bodies are held: the one
// being rendered and the one before (docs/benchmarks.md, "Clients that
// never read").
type metricsHandler struct {
	gatherer prometheus.Gatherer
	direct   []collector.TableSource
	logger   *slog.Logger
	inFlight chan struct{} // nil = no limit

	mu        sync.Mutex
	gen       uint64                   // renders started
	rendering map[renderKey]*rendering // the render in progress, by what it renders
	writing   map[*bodyWriter]struct{} // requests writing (or waiting for) a body
}

func newMetricsHandler(g prometheus.Gatherer, direct []collector.TableSource, logger *slog.Logger, maxRequests int) *metricsHandler {
	h := &metricsHandler{gatherer: g, direct: direct, logger: logger,
		rendering: make(map[renderKey]*rendering), writing: make(map[*bodyWriter]struct{})}
	if maxRequests > 0 {
		h.inFlight = make(chan struct{}, maxRequests)
	}
	return h
}

// renderKey is what decides a body's bytes besides the state: the encoding
// and the name[] selection.
type renderKey struct {
	gzip  bool
	names string // the selected family names, sorted, NUL-separated; "" = all
}

// rendering is one body, rendered once and written to every request that
// shares it. Its fields are set before done is closed and never changed.
type rendering struct {
	gen    uint64
	done   chan struct{}
	body   chunks
	status int    // 0, or the error status of a body that could not be made
	errMsg string // the error text of that status

	refs int // requests sharing it; guarded by metricsHandler.mu
}

// bodyWriter is one request writing a body.
type bodyWriter struct {
	r   *rendering
	cut func() // ends its writes at once
}

// chunkSize is the unit a body is kept in: no copy as it grows, and at most
// one partly used chunk.
const chunkSize = 1 << 20

// chunks is a body in chunkSize pieces.
type chunks [][]byte

// chunkPool keeps the chunks of bodies nobody writes any more for the next
// render: a body is garbage as soon as its last client is done, and reusing
// its memory keeps the process from growing by a body per render until the
// collector runs.
var chunkPool sync.Pool

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(*c) == 0 || len((*c)[len(*c)-1]) == chunkSize {
			b := make([]byte, 0, chunkSize)
			if p, ok := chunkPool.Get().(*[]byte); ok {
				b = (*p)[:0]
			}
			*c = append(*c, b)
		}
		last := &(*c)[len(*c)-1]
		k := min(len(p), chunkSize-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// recycle hands the chunks to the next render.
func (c chunks) recycle() {
	for _, b := range c {
		b = b[:0]
		chunkPool.Put(&b)
	}
}

func (c chunks) size() int {
	n := 0
	for _, b := range c {
		n += len(b)
	}
	return n
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
	key := renderKey{gzip: acceptsGzip(req.Header)}
	if req.URL != nil {
		if names := req.URL.Query()["name[]"]; len(names) > 0 {
			names = slices.Compact(slices.Sorted(slices.Values(names)))
			key.names = strings.Join(names, "\x00")
		}
	}
	rc := http.NewResponseController(rsp)
	w, owner := h.join(key, func() { rc.SetWriteDeadline(time.Now()) })
	defer h.leave(w)
	r := w.r
	if owner {
		h.render(key, r)
	} else {
		select {
		case <-r.done:
		case <-req.Context().Done():
			return
		}
	}
	if r.status != 0 {
		http.Error(rsp, r.errMsg, r.status)
		return
	}
	hdr := rsp.Header()
	hdr.Add("Vary", "Accept-Encoding")
	hdr.Set("Content-Type", string(expfmt.FmtText))
	if key.gzip {
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(r.body.size()))
	for _, c := range r.body {
		if _, err := rsp.Write(c); err != nil {
			return // the client went away, or was cut off
		}
	}
}

// join adds a request to the render of key in progress, or starts one
// (owner: the caller renders it). Starting one cuts off the requests still
// writing a body two renders old.
func (h *metricsHandler) join(key renderKey, cut func()) (w *bodyWriter, owner bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rendering[key]
	if r == nil {
		owner = true
		h.gen++
		r = &rendering{gen: h.gen, done: make(chan struct{})}
		h.rendering[key] = r
		for old := range h.writing {
			if old.r.gen+2 <= r.gen && isClosed(old.r.done) {
				old.cut()
				delete(h.writing, old) // cut once; its leave finds nothing
			}
		}
	}
	w = &bodyWriter{r: r, cut: cut}
	h.writing[w] = struct{}{}
	r.refs++
	return w, owner
}

// leave ends a request's share of its body; the last one recycles the body
// (no one can join it any more: it is no longer in h.rendering once done).
func (h *metricsHandler) leave(w *bodyWriter) {
	h.mu.Lock()
	delete(h.writing, w)
	w.r.refs--
	last := w.r.refs == 0 && isClosed(w.r.done)
	h.mu.Unlock()
	if last {
		w.r.body.recycle()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// render makes r's body and hands it to the requests sharing it.
func (h *metricsHandler) render(key renderKey, r *rendering) {
	defer func() {
		h.mu.Lock()
		if h.rendering[key] == r {
			delete(h.rendering, key)
		}
		h.mu.Unlock()
		close(r.done)
	}()
	mfs, err := h.gatherer.Gather()
	if err != nil {
		h.logger.Error("Error gathering metrics", "err", err)
		if len(mfs) == 0 && len(h.direct) == 0 {
			r.status, r.errMsg = http.StatusInternalServerError, "An error has occurred while serving metrics:\n\n"+err.Error()
			return
		}
	}
	var keep func(string) bool
	if key.names != "" {
		set := make(map[string]struct{})
		for n := range strings.SplitSeq(key.names, "\x00") {
			set[n] = struct{}{}
		}
		keep = func(name string) bool { _, ok := set[name]; return ok }
	}
	var out io.Writer = &r.body
	var gz *gzip.Writer
	if key.gzip {
		gz = gzipPool.Get().(*gzip.Writer)
		gz.Reset(&r.body)
		out = gz
	}
	if err := collector.WriteText(out, mfs, keep, h.direct...); err != nil {
		h.logger.Error("Error encoding metrics", "err", err)
	}
	if gz != nil {
		gz.Close()
		gz.Reset(nil)
		gzipPool.Put(gz)
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
