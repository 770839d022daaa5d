package tail

import (
	"errors"
	"io"
	"sync"
)

// pipeQueueBytes bounds what is read from a pipe ahead of Poll, and so what
// one Poll delivers: a writer far ahead (a log replayed into stdin) is
// followed as fast as the lines are parsed, with memory bounded.
const pipeQueueBytes = 16 << 20

// pipeSpareBytes is the largest buffer kept for reuse between polls, so that
// the memory a burst needed is given back once it is over.
const pipeSpareBytes = 4 * readBufferSize

// pipeReader moves a pipe's data into memory as it arrives, on a goroutine
// of its own. A pipe holds only 64 KiB: read once per poll, it would hold its
// writer to 64 KiB per poll interval. Poll takes what has arrived without
// ever waiting, so it never blocks its caller (who may hold a lock, or want
// to stop) on a pipe that is quiet.
type pipeReader struct {
	mu     sync.Mutex
	taken  *sync.Cond // signaled when data was taken or the follower closed
	data   []byte     // arrived, not taken yet
	err    error      // how the input ended: io.EOF at its end
	closed bool
}

func startPipeReader(r io.Reader) *pipeReader {
	p := &pipeReader{}
	p.taken = sync.NewCond(&p.mu)
	go p.fill(r)
	return p
}

// fill reads r until it ends or the follower closes. A read blocked on a
// quiet pipe cannot be interrupted in general: after Close the goroutine
// ends at the next data or the end of input.
func (p *pipeReader) fill(r io.Reader) {
	buf := make([]byte, readBufferSize)
	for {
		n, err := r.Read(buf)
		p.mu.Lock()
		for len(p.data)+n > pipeQueueBytes && !p.closed {
			p.taken.Wait()
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		p.data = append(p.data, buf[:n]...)
		p.err = err
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// take returns what has arrived, at most max bytes, and gives spare to
// receive what comes next. The error that ended the input is returned once
// everything before it has been taken.
func (p *pipeReader) take(spare []byte, max int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.data) > max {
		data := spare[:0]
		data = append(data, p.data[:max]...)
		p.data = p.data[:copy(p.data, p.data[max:])]
		p.taken.Signal()
		return data, nil
	}
	data := p.data
	p.data = spare[:0]
	p.taken.Signal()
	if len(data) > 0 {
		return data, nil
	}
	return data, p.err
}

func (p *pipeReader) close() {
	p.mu.Lock()
	p.closed = true
	p.taken.Broadcast()
	p.mu.Unlock()
}

// pollPipe delivers what the pipe brought since the last poll. A pipe has no
// name to stat and cannot rotate; at its end the last partial line is
// delivered, since nothing can complete it any more.
func (f *Follower) pollPipe(deliver func([]byte)) error {
	if f.pipeIn == nil {
		f.pipeIn = startPipeReader(f.pipe)
	}
	data, err := f.pipeIn.take(f.pipeSpare, f.budget)
	if n := len(data); n > 0 {
		f.lines.base = f.offset
		f.budget -= n
		f.offset += int64(n)
		f.stats.bytes.Add(uint64(n))
		f.delivered(f.lines.split(data, deliver))
		f.commit()
	}
	f.pipeSpare = nil
	if cap(data) <= pipeSpareBytes {
		f.pipeSpare = data
	}
	if errors.Is(err, io.EOF) {
		f.flush(deliver)
		return io.EOF
	}
	if err == nil && f.budget <= 0 {
		return errBudget
	}
	return err
}
