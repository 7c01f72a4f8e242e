package jobtable

import (
	"crypto/rand"
	"encoding/base32"
	"sync"
)

// newID is the default id source: 128 bits read from crypto/rand, as 26
// characters of the base32 alphabet (A-Z, 2-7), the alphabet and length of
// crypto/rand.Text (which carries 130 bits). An id is a bearer capability
// (whoever knows it can read and cancel the job), so it must be
// unguessable, and 128 random bits also make a repeat too unlikely to
// matter.
//
// It reads crypto/rand in batches of idBatch ids, each from its own 16
// bytes, never reused: one read of 512 bytes costs about what a read of 16
// does, so a batch makes an id about three times cheaper than
// crypto/rand.Text (BenchmarkNewID). The batches sit in a sync.Pool, so
// concurrent Submits do not share one buffer; a buffer the pool drops
// takes its unused bytes with it, which is harmless. The price is that up
// to a batch of future ids' randomness sits in the process's memory, as
// it does in the kernel's per-thread getrandom state that crypto/rand
// already reads from.
func newID() string {
	b := idBuffers.Get().(*idBuffer)
	if b.off == len(b.bytes) {
		rand.Read(b.bytes[:]) // never fails: see crypto/rand.Read
		b.off = 0
	}
	var text [idLen]byte
	idEncoding.Encode(text[:], b.bytes[b.off:b.off+idBytes])
	b.off += idBytes
	idBuffers.Put(b)
	return string(text[:])
}

const (
	idBytes = 16                  // 128 bits per id
	idBatch = 32                  // ids per read of crypto/rand
	idLen   = (8*idBytes + 4) / 5 // base32 characters for idBytes
)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// idBuffer holds random bytes for the ids of one batch; bytes[off:] are
// not yet used.
type idBuffer struct {
	bytes [idBatch * idBytes]byte
	off   int
}

var idBuffers = sync.Pool{New: func() any { return &idBuffer{off: idBatch * idBytes} }}
