//go:build unix

package secretfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens path for reading if it is a regular file. O_NONBLOCK
// makes the open of a named pipe return at once (it would otherwise wait for
// a writer); what is not a regular file is refused after fstat, before any
// read.
func openRegular(path string) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		// A regular file ignores O_NONBLOCK; clearing it before os.NewFile
		// leaves an ordinary blocking descriptor. Should it fail, reads still
		// work: a regular file never answers EAGAIN.
		_ = syscall.SetNonblock(fd, false)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := statRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
