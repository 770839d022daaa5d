package tail

import "io"

// pollPipe reads once from the pipe, blocking until data or its end. A pipe
// has no name to stat and cannot rotate; at its end the last partial line
// is delivered, since nothing can complete it any more.
func (f *Follower) pollPipe(deliver func([]byte)) error {
	n, err := f.pipe.Read(f.buf)
	if n > 0 {
		chunk := f.buf[:n]
		f.offset += int64(n)
		f.stats.bytes.Add(uint64(n))
		f.delivered(f.lines.split(chunk, deliver))
		f.commit()
	}
	if err == io.EOF {
		f.flush(deliver)
		return io.EOF
	}
	return err
}
