//go:build unix

package poller

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testcert"
)

// TestAdminFilesThatAreNotSmallRegularFilesAreRefused: the password and TLS
// files are read at start-up; a named pipe there must not block the start
// (opening one waits for a writer), and a huge file must be refused by its
// size, not read into memory. Each is one line naming the flag.
func TestAdminFilesThatAreNotSmallRegularFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	cert, key := testcert.New(t).WriteFiles(t, dir)
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // lets a reader stuck on the pipe go
		if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
	})
	huge := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		return p
	}
	hugePassword := huge("pw-huge", 65<<10)
	hugePEM := huge("pem-huge", 256<<20)

	scram := []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=scram-sha-512", "--kafka.sasl.username=u"}
	tlsOn := []string{"--kafka.server=k:9092", "--kafka.tls.enabled"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"password file is a pipe", append(scram, "--kafka.sasl.password-file="+fifo), "--kafka.sasl.password-file: " + fifo + " is a named pipe"},
		{"password file over 64 KiB", append(scram, "--kafka.sasl.password-file="+hugePassword), "--kafka.sasl.password-file: " + hugePassword + " is larger than"},
		{"CA file is a pipe", append(tlsOn, "--kafka.tls.ca-file="+fifo), "--kafka.tls.ca-file: " + fifo + " is a named pipe"},
		{"CA file of 256 MiB", append(tlsOn, "--kafka.tls.ca-file="+hugePEM), "--kafka.tls.ca-file: " + hugePEM + " is larger than"},
		{"cert file is a pipe", append(tlsOn, "--kafka.tls.cert-file="+fifo, "--kafka.tls.key-file="+key), "--kafka.tls.cert-file: " + fifo + " is a named pipe"},
		{"key file is a pipe", append(tlsOn, "--kafka.tls.cert-file="+cert, "--kafka.tls.key-file="+fifo), "--kafka.tls.key-file: " + fifo + " is a named pipe"},
		{"key file of 256 MiB", append(tlsOn, "--kafka.tls.cert-file="+cert, "--kafka.tls.key-file="+hugePEM), "--kafka.tls.key-file: " + hugePEM + " is larger than"},
		{"password file is a directory", append(scram, "--kafka.sasl.password-file="+dir), "is a directory"},
		{"a good password file", append(scram, "--kafka.sasl.password-file="+pw), ""},
		{"a good key pair", append(tlsOn, "--kafka.tls.cert-file="+cert, "--kafka.tls.key-file="+key, "--kafka.tls.ca-file="+cert), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			done := make(chan struct{})
			go func() { defer close(done); _, err = parseAdminFlags(t, nil, tc.args...) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("Validate still blocked after 2s")
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("not one line: %q", err)
			}
		})
	}
}
