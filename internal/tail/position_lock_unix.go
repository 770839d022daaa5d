//go:build unix

package tail

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is lockFile's error when another open file holds the lock.
var errLocked = errors.New("locked")

// lockFile takes an exclusive flock on f without waiting. The kernel
// releases it when f is closed or the process ends, however it ends.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return errLocked
		}
		return err
	}
}
