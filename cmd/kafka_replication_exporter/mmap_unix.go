//go:build unix

package main

import (
	"os"
	"syscall"
)

// mapFile maps a whole regular file read-only, so verify splits lines
// straight out of the page cache instead of copying every byte through
// read(2) and two bufio buffers, a copy that shows in verify's time on
// large logs.
// ok=false means "read it the ordinary way" (empty file, not mappable).
// A file truncated while mapped faults on access; scanFiles turns that
// fault into an error (see readFault).
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, false
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return data, func() { _ = syscall.Munmap(data) }, true
}
