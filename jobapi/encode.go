package jobapi

import (
	"net/http"
	"sync"

	"github.com/jobledger/jobledger/wire"
)

// The hottest replies (a snapshot, a 202, a page of GET /jobs) are encoded
// by package wire's hand-written encoder into a pooled buffer.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeSnapshot writes b as a 200 (or status) JSON reply.
func writeSnapshot(w http.ResponseWriter, status int, b wire.Snapshot) {
	bp := bufPool.Get().(*[]byte)
	buf := wire.AppendSnapshot((*bp)[:0], b)
	buf = append(buf, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf) // the client went away
	*bp = buf
	bufPool.Put(bp)
}

// writeAcceptedBody writes the 202 of POST /jobs for id, PENDING, encoded
// by hand as the snapshot is: an idempotent replay is this and a lookup.
func writeAcceptedBody(w http.ResponseWriter, id string) {
	bp := bufPool.Get().(*[]byte)
	buf := wire.AppendAccepted((*bp)[:0], wire.Accepted{JobID: id, State: wire.Pending})
	buf = append(buf, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	w.Write(buf) // the client went away
	*bp = buf
	bufPool.Put(bp)
}
