//go:build unix

package tail

import "syscall"

// readHead reads up to len(buf) bytes from the start of the file at path.
// It is the cheapest read there is (open, read, close: a rotation may read
// the heads of many thousand rolled files) and it never blocks: O_NONBLOCK
// makes a named pipe that took a rolled name answer at once.
func readHead(path string, buf []byte) (int, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			return n, err
		}
		n += m
	}
	return n, nil
}
