//go:build unix

package tail

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens path for reading only if it is a regular file. The open
// itself never blocks: O_NONBLOCK makes opening a named pipe return at once
// (opening one for reading otherwise waits for a writer), and whatever is not
// a regular file is refused after fstat, before anything reads it.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		// Regular files ignore O_NONBLOCK; clearing it keeps the
		// descriptor an ordinary blocking one. Should it fail, reads still
		// work: a regular file never answers EAGAIN.
		_ = syscall.SetNonblock(fd, false)
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &notRegularError{path, fi.Mode()}
	}
	return f, fi, nil
}
