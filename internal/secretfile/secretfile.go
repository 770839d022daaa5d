// Package secretfile reads the small files given on the command line that
// hold a secret or a certificate: the SASL password, the OAuth client secret
// and the TLS PEM files. Each is read whole, so a file that is not what it
// should be must not block the reader or fill its memory: a named pipe would
// block the open until a writer comes, /dev/zero or a huge file would be read
// without end.
package secretfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits of what Read accepts.
const (
	// SecretLimit bounds a password or client-secret file: real secrets are
	// at most a few hundred bytes; a JWT assertion a few KiB.
	SecretLimit = 64 << 10
	// PEMLimit bounds a PEM file. A CA bundle can hold every public root (the
	// Debian and Mozilla bundles are about 220 KiB for some 150
	// certificates), so the bound is well above that.
	PEMLimit = 1 << 20
)

// Read returns the contents of the regular file at path, refusing anything
// else (a directory, a named pipe, a device, a socket) without blocking, and
// refusing a file larger than limit bytes without reading it. The error is
// one line that names the path and says what is wrong.
func Read(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// The file may grow after the stat: the read is bounded too.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, limit)
	}
	return b, nil
}

func tooLarge(path string, limit int64) error {
	size := fmt.Sprintf("%d KiB", limit>>10)
	if limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", limit>>20)
	}
	return fmt.Errorf("%s is larger than %s, the limit for this file", path, size)
}

// notRegular says what path is instead of a regular file.
func notRegular(path string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, want a regular file", path, what)
}

// statRegular refuses f unless it is a regular file.
func statRegular(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	return nil
}
