//go:build !unix

package tail

import "io"

// readHead reads up to len(buf) bytes from the start of the regular file at
// path.
func readHead(path string, buf []byte) (int, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}
