//go:build unix

package kafkaauth

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a named pipe in a temporary directory; the cleanup opens and
// closes its writing end, which lets a reader stuck on it go.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
	})
}

// TestSecretFileThatIsAPipeNeverBlocks: a named pipe as the secret file is
// refused at start-up, and one that replaces the file later fails the
// refresh at once; neither blocks a caller.
func TestSecretFileThatIsAPipeNeverBlocks(t *testing.T) {
	t.Run("at start", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "secret")
		mkfifo(t, fifo)
		var err error
		within(t, 2*time.Second, "NewSource with a named pipe", func() {
			_, err = (&Flags{TokenURL: "https://idp.example/token", ClientID: "c", ClientSecretFile: fifo}).NewSource(MechanismOAuthBearer, nil, time.Second)
		})
		if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), "--kafka.sasl.oauthbearer.client-secret-file") {
			t.Fatalf("err %v, want the flag and that it is a named pipe", err)
		}
	})
	t.Run("at refresh", testSecretFileBecomesAPipe)
}

func testSecretFileBecomesAPipe(t *testing.T) {
	ts := newTokenServer(t, false)
	secretFile := writeSecret(t, "s3cret")
	s, clock := newSource(t, ts, Flags{ClientSecretFile: secretFile}, nil)
	mustToken(t, s)
	if err := os.Remove(secretFile); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, secretFile)
	var err error
	clock.add(101 * time.Second) // past the expiry: the caller must wait for the refresh
	within(t, 2*time.Second, "sarama's Token with the secret file replaced by a named pipe", func() {
		_, err = s.Sarama().Token()
	})
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("err %v, want the named pipe", err)
	}
}

// TestHugeSecretFileIsRefusedUnread: a secret file far larger than any
// secret (here a 256 MiB sparse file) is refused from its size, not read.
func TestHugeSecretFileIsRefusedUnread(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "secret")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = (&Flags{TokenURL: "https://idp.example/token", ClientID: "c", ClientSecretFile: huge}).NewSource(MechanismOAuthBearer, nil, time.Second)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v, want the file refused as too large", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("allocated %d bytes to refuse it", grew)
	}
}
