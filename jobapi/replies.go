package jobapi

import (
	"bytes"
	"net/http"
)

// A reply that carries a stored result holds the result as read from the
// store and its encoding until the last byte is written, which a slow
// reader can put off until the write timeout: 200 slow readers of an 8 MB
// result grew the process by a gigabyte. So such replies share one byte
// budget, max_reply_bytes_in_flight: each takes replyBase before it reads
// the result (none is read once the budget cannot spare even that), then
// its whole share once it knows the result's size, and holds it until the
// handler returns. A reply whose share does not fit is answered 503 with
// Retry-After. A result larger than the whole budget takes all of it, and
// is written alone.

// replyBase is the share a reply takes before it reads the result: what
// its envelope (the job's id, task id and state) may take once encoded.
const replyBase = 1 << 10

// byteBudget is a budget of bytes: semaphore.Weighted's non-blocking half.
type byteBudget interface {
	TryAcquire(n int64) bool
	Release(n int64)
}

// replyShare is one reply's share of the server's reply budget. Its
// release gives back what it took, once, whatever the way out of the
// handler: call it deferred.
type replyShare struct {
	budget byteBudget
	size   int64 // the whole budget, the largest share
	n      int64 // held
}

// takeReply takes a reply's base share, or reports false when the budget
// cannot spare it.
func (s *Server) takeReply() (*replyShare, bool) {
	n := min(int64(replyBase), s.cfg.MaxReplyBytesInFlight)
	if !s.replyBytes.TryAcquire(n) {
		return nil, false
	}
	return &replyShare{budget: s.replyBytes, size: s.cfg.MaxReplyBytesInFlight, n: n}, true
}

// grow extends the share to what a reply of result holds: the result as
// read and its encoding, which is as long as the result but for the
// envelope and the escapes encoding/json writes (<, > and & take six bytes,
// U+2028 and U+2029 six instead of three), at most the whole budget. It
// reports false, the share unchanged, when that does not fit.
func (r *replyShare) grow(result []byte) bool {
	want := r.size
	if n := int64(len(result)); n < r.size { // r.size <= 2^40: no overflow
		n += 5*int64(bytes.Count(result, []byte("<"))+bytes.Count(result, []byte(">"))+bytes.Count(result, []byte("&"))) +
			3*int64(bytes.Count(result, []byte("\u2028"))+bytes.Count(result, []byte("\u2029")))
		want = min(int64(len(result))+n+replyBase, r.size)
	}
	if want <= r.n {
		return true
	}
	if !r.budget.TryAcquire(want - r.n) {
		return false
	}
	r.n = want
	return true
}

// release gives the share back; later calls do nothing.
func (r *replyShare) release() {
	if r.n > 0 {
		r.budget.Release(r.n)
		r.n = 0
	}
}

// replyBusy answers a reply that got no share of the budget.
func replyBusy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeProblem(w, http.StatusServiceUnavailable, detailReplyBusy, nil)
}
