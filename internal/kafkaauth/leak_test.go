package kafkaauth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// leakSecret has characters that the form and the Basic header encode, and
// a marker that survives any quoting of a log line.
const leakSecret = "Zq9marker s3cret/+&="

// syncBuffer collects log lines from the source's refresh goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestSecretNeverInLogsOrErrors: a token endpoint that echoes what it was
// sent (the form with client_secret, the Authorization header) in its body,
// its OAuth error fields, its status line, its content type or a field that
// fails to parse must not get the secret into an error or a log line.
func TestSecretNeverInLogsOrErrors(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("exporter:" + url.QueryEscape(leakSecret)))
	forms := []string{leakSecret, url.QueryEscape(leakSecret), url.PathEscape(leakSecret), basic, "Zq9"}
	echo := func(r *http.Request) string {
		_ = r.ParseForm()
		return r.Form.Encode() + " " + r.Header.Get("Authorization")
	}
	for name, answer := range map[string]func(w http.ResponseWriter, r *http.Request){
		"text body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, echo(r))
		},
		"html body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, "<html><body>"+echo(r)+"</body></html>")
		},
		"error_description": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"error":"invalid_request","error_description":%q}`, "could not parse "+echo(r))
		},
		"error_description cut short": func(w http.ResponseWriter, r *http.Request) {
			got := "got " + echo(r)
			if i := strings.Index(got, "Zq9"); i >= 0 {
				got = got[:i+5]
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"error":"invalid_request","error_description":%q}`, got)
		},
		"error code": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, `{"error":%q}`, echo(r))
		},
		"unparsable field": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"access_token":"x","expires_in":%q}`, echo(r))
		},
		"content type": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; echo="+strings.ReplaceAll(echo(r), " ", "_"))
			w.WriteHeader(http.StatusBadGateway)
		},
		"status line": func(w http.ResponseWriter, r *http.Request) {
			line := echo(r)
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = fmt.Fprintf(buf, "HTTP/1.1 400 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", line)
			_ = buf.Flush()
		},
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(answer))
			t.Cleanup(ts.Close)
			s, _ := newSource(t, nil, Flags{TokenURL: ts.URL + "/token", ClientSecretFile: writeSecret(t, leakSecret)}, nil)
			var logs syncBuffer
			s.SetLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			_, err := s.Token(context.Background())
			if err == nil {
				t.Fatal("a token from an endpoint that only echoes")
			}
			_, saramaErr := s.Sarama().Token()
			var errs []string
			for _, e := range []error{err, saramaErr} {
				if e != nil {
					errs = append(errs, e.Error())
				}
			}
			for _, f := range forms {
				for _, e := range errs {
					if strings.Contains(e, f) {
						t.Errorf("the error has the secret (%q): %s", f, e)
					}
				}
				sc := bufio.NewScanner(strings.NewReader(logs.String()))
				for sc.Scan() {
					if strings.Contains(sc.Text(), f) {
						t.Errorf("a log line has the secret (%q): %s", f, sc.Text())
					}
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
			t.Log(err)
		})
	}
}

// TestSecretRedactorCutsEveryForm: the forms an echo can carry, the Basic
// header's among them (the endpoint above sees it only on the first try).
func TestSecretRedactorCutsEveryForm(t *testing.T) {
	r := secretRedactor("exporter", leakSecret)
	for _, form := range []string{
		leakSecret,
		url.QueryEscape(leakSecret),
		url.PathEscape(leakSecret),
		base64.StdEncoding.EncodeToString([]byte("exporter:" + url.QueryEscape(leakSecret))),
		base64.StdEncoding.EncodeToString([]byte("exporter:" + leakSecret)),
		fmt.Sprintf("%q", leakSecret),
	} {
		if got := r.Replace("x " + form + " y"); strings.Contains(got, "Zq9") || strings.Contains(got, form) {
			t.Errorf("%q: %q", form, got)
		}
	}
}
