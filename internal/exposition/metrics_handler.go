package exposition

import (
	"bytes"
	"context"
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
	"github.com/klauspost/compress/s2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// MetricsHandler serves the telemetry path in place of promhttp.HandlerFor:
// the registry's families (build info, Go and process) are gathered, and
// every kafka_replication_* family is written by WriteText, because
// at tens of thousands of partitions Gather plus expfmt cost far more CPU
// and memory than the scrape interval allows (docs/design.md). It keeps
// promhttp's behavior: max-in-flight, gzip, name[] selection, and
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
// shares (kept compressed, see body), never a snapshot of the state or a
// renderer's buffers. Renders take turns, --web.max-renders at a time (one
// by default): requests that cannot share a body wait for a turn, holding
// nothing, and a turn ends when the body is rendered, before it is written,
// so a client that never reads does not hold it. The bodies still being
// written are bounded to twice the largest of them: when a render makes
// them more, the clients of the oldest are cut off (their write deadline is
// set to now, as --web.write-timeout would later). So whatever the mix of
// queries and however many clients stop reading, memory holds the renders
// of the turns and at most two bodies (docs/benchmarks.md, "Distinct
// scrapers that never read"), and a slow client loses its scrape only to
// two newer ones as large.
type MetricsHandler struct {
	gatherer prometheus.Gatherer
	direct   []TableSource
	logger   *slog.Logger
	inFlight chan struct{} // nil = no limit
	renders  chan struct{} // the turns to render: one slot per render under way

	mu        sync.Mutex
	rendering map[renderKey]*rendering // the render in progress, by what it renders
	written   []*rendering             // rendered bodies still being written, oldest first
}

func NewMetricsHandler(g prometheus.Gatherer, direct []TableSource, logger *slog.Logger, maxRequests, maxRenders int) *MetricsHandler {
	h := &MetricsHandler{
		gatherer: g, direct: direct, logger: logger, rendering: make(map[renderKey]*rendering),
		renders: make(chan struct{}, max(maxRenders, 1)),
	}
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
// shares it. Its body and status are set before done is closed and never
// changed.
type rendering struct {
	done   chan struct{}
	body   body
	status int    // 0, or the error status of a body that could not be made
	errMsg string // the error text of that status

	writers map[*bodyWriter]struct{} // the requests sharing it; guarded by MetricsHandler.mu
	cut     bool                     // its writers were cut off; guarded by MetricsHandler.mu
}

// bodyWriter is one request writing a body.
type bodyWriter struct {
	r   *rendering
	cut func() // ends its writes at once
}

// body is a rendered scrape, kept in pieces: the gzip stream as it is (it is
// small), the text compressed with s2 in blocks of blockSize, which a request
// decodes one at a time as it writes them. So a body in memory is a fraction
// of the text (a 100k-partition scrape is 170 MB of text), and a client that
// stops reading holds one decoded block besides the shared body.
type body struct {
	s2      bool     // pieces are s2 blocks of text; else raw bytes
	pieces  [][]byte // the body, in order
	pending []byte   // text not yet encoded (s2)
	enc     []byte   // s2's output before it is copied to its exact size
	n       int      // bytes the client receives
}

// blockSize is the text in one s2 block, and the raw piece size.
const blockSize = 64 << 10

// blockPool holds blockSize buffers: for text waiting to be encoded, for a
// request's decoded block, and the raw pieces of bodies nobody writes any
// more (their memory is reused by the next render instead of growing the
// heap until the collector runs).
var blockPool = sync.Pool{New: func() any { b := make([]byte, 0, blockSize); return &b }}

func getBlock() []byte { return (*blockPool.Get().(*[]byte))[:0] }

func putBlock(b []byte) {
	if cap(b) == blockSize {
		b = b[:0]
		blockPool.Put(&b)
	}
}

func (b *body) Write(p []byte) (int, error) {
	n := len(p)
	b.n += n
	for len(p) > 0 {
		var cur *[]byte
		if b.s2 {
			if b.pending == nil {
				b.pending = getBlock()
			}
			cur = &b.pending
		} else {
			if len(b.pieces) == 0 || len(b.pieces[len(b.pieces)-1]) == blockSize {
				b.pieces = append(b.pieces, getBlock())
			}
			cur = &b.pieces[len(b.pieces)-1]
		}
		k := min(len(p), blockSize-len(*cur))
		*cur = append(*cur, p[:k]...)
		p = p[k:]
		if b.s2 && len(b.pending) == blockSize {
			b.encodePending()
		}
	}
	return n, nil
}

func (b *body) encodePending() {
	if len(b.pending) > 0 {
		// Encode into a scratch buffer of the worst-case size, keep an exact copy.
		if b.enc == nil {
			b.enc = make([]byte, s2.MaxEncodedLen(blockSize))
		}
		b.enc = s2.Encode(b.enc[:cap(b.enc)], b.pending)
		b.pieces = append(b.pieces, bytes.Clone(b.enc))
	}
	putBlock(b.pending)
	b.pending = nil
}

// finish encodes the last block.
func (b *body) finish() {
	if b.s2 {
		b.encodePending()
		b.enc = nil
	}
}

// writeTo writes the body to w, decoding s2 blocks into one buffer.
func (b *body) writeTo(w io.Writer) error {
	if !b.s2 {
		for _, p := range b.pieces {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	}
	buf := getBlock()
	defer putBlock(buf)
	for _, p := range b.pieces {
		text, err := s2.Decode(buf[:cap(buf)], p)
		if err != nil {
			return err
		}
		if _, err := w.Write(text); err != nil {
			return err
		}
	}
	return nil
}

// held is the memory the body holds.
func (b *body) held() int {
	n := 0
	for _, p := range b.pieces {
		n += cap(p)
	}
	return n
}

// recycle hands raw pieces to the next render.
func (b *body) recycle() {
	if !b.s2 {
		for _, p := range b.pieces {
			putBlock(p)
		}
	}
	b.pieces = nil
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

func (h *MetricsHandler) ServeHTTP(rsp http.ResponseWriter, req *http.Request) {
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
	// A ResponseWriter without deadlines (http.ErrNotSupported) cannot be
	// cut: its client is then bounded by the server's write timeout alone.
	rc := http.NewResponseController(rsp)
	w, owner := h.join(key, func() { _ = rc.SetWriteDeadline(time.Now()) })
	written := false
	defer func() {
		// A cut that came as the last byte went out must not outlive this
		// response on a kept-alive connection.
		if h.leave(w) && written {
			_ = rc.SetWriteDeadline(time.Time{})
		}
	}()
	r := w.r
	if owner {
		if !h.takeTurn(req.Context(), key, r) {
			return // its client went away and no other request shares it
		}
		h.render(key, r)
		<-h.renders // rendered: the next render may start while this body is written
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
	hdr.Set("Content-Length", strconv.Itoa(r.body.n))
	if err := r.body.writeTo(rsp); err != nil {
		return // the client went away, or was cut off
	}
	written = true
}

// join adds a request to the render of key in progress, or starts one
// (owner: the caller renders it).
func (h *MetricsHandler) join(key renderKey, cut func()) (w *bodyWriter, owner bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rendering[key]
	if r == nil {
		owner = true
		r = &rendering{done: make(chan struct{}), writers: make(map[*bodyWriter]struct{})}
		h.rendering[key] = r
	}
	w = &bodyWriter{r: r, cut: cut}
	r.writers[w] = struct{}{}
	return w, owner
}

// takeTurn waits for a turn to render r. It gives up, and withdraws r,
// when r's client goes away first and no other request shares r.
func (h *MetricsHandler) takeTurn(ctx context.Context, key renderKey, r *rendering) bool {
	select {
	case h.renders <- struct{}{}:
		if ctx.Err() != nil && h.withdraw(key, r) {
			<-h.renders
			return false
		}
		return true
	case <-ctx.Done():
		if h.withdraw(key, r) {
			return false
		}
		h.renders <- struct{}{} // others wait for r: render it for them
		return true
	}
}

// withdraw takes r, not rendered yet, out of the renders to share, if its
// owner is the only request sharing it.
func (h *MetricsHandler) withdraw(key renderKey, r *rendering) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(r.writers) > 1 {
		return false
	}
	if h.rendering[key] == r {
		delete(h.rendering, key)
	}
	r.status, r.errMsg = http.StatusServiceUnavailable, "The client went away before its turn to render."
	close(r.done)
	return true
}

// rendered publishes r, rendered for key, and bounds the bodies being
// written to twice the largest: the clients of the oldest are cut off.
func (h *MetricsHandler) rendered(key renderKey, r *rendering) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rendering[key] == r {
		delete(h.rendering, key)
	}
	close(r.done)
	if len(r.writers) == 0 {
		return
	}
	h.written = append(h.written, r)
	total, largest := 0, 0
	for _, old := range h.written {
		total += old.body.held()
		largest = max(largest, old.body.held())
	}
	for total > 2*largest && len(h.written) > 1 {
		old := h.written[0]
		for w := range old.writers {
			w.cut()
		}
		old.cut = true
		total -= old.body.held()
		h.written = h.written[1:]
	}
}

// leave ends a request's share of its body and reports whether it was cut
// off; the last one recycles the body (no one can join it once rendered).
func (h *MetricsHandler) leave(w *bodyWriter) (wasCut bool) {
	h.mu.Lock()
	r := w.r
	delete(r.writers, w)
	wasCut = r.cut
	last := len(r.writers) == 0 && isClosed(r.done)
	if last {
		if i := slices.Index(h.written, r); i >= 0 {
			h.written = slices.Delete(h.written, i, i+1)
		}
	}
	h.mu.Unlock()
	if last {
		r.body.recycle()
	}
	return wasCut
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
func (h *MetricsHandler) render(key renderKey, r *rendering) {
	defer h.rendered(key, r)
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
	} else {
		r.body.s2 = true
	}
	if err := WriteText(out, mfs, keep, h.direct...); err != nil {
		h.logger.Error("Error encoding metrics", "err", err)
	}
	if gz != nil {
		gz.Close()
		gz.Reset(nil)
		gzipPool.Put(gz)
	}
	r.body.finish()
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
