package jobapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/wire"
)

// Idempotency-Key (the IETF httpapi Idempotency-Key header draft) on
// POST /jobs: a submit under a key creates a job only if no retained job
// holds the key; a repeat with the same body answers as the first did, and
// one with another body is refused with 422. The ledger checks the key in
// the step that admits the job (ledger.Ledger.Submit under the key), so two
// concurrent submits with one new key create exactly one job.

// maxKeyLen bounds an idempotency key, in characters (bytes: only printable
// ASCII is accepted).
const maxKeyLen = 255

// idempotencyKey reads the Idempotency-Key of h: "" and true when there is
// none, the key and true when it is well-formed, false when it is not. The
// draft writes the key as a structured-field string ("..."), and many
// clients send it bare, so either is accepted: a quoted value is unquoted
// (with \" and \\ as its escapes). The key itself must be 1 to 255
// printable ASCII characters (0x20 to 0x7E); two fields are refused, as
// they cannot both be honoured.
func idempotencyKey(h http.Header) (string, bool) {
	vals := h["Idempotency-Key"] // canonical already: Values would canonicalize it again
	switch len(vals) {
	case 0:
		return "", true
	case 1:
	default:
		return "", false
	}
	v := strings.Trim(vals[0], " \t")
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var b strings.Builder
		for i := 1; i < len(v)-1; i++ {
			c := v[i]
			if c == '\\' {
				i++
				if i == len(v)-1 || (v[i] != '"' && v[i] != '\\') {
					return "", false
				}
				c = v[i]
			} else if c == '"' {
				return "", false
			}
			b.WriteByte(c)
		}
		v = b.String()
	}
	if v == "" || len(v) > maxKeyLen {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", false
		}
	}
	return v, true
}

// replay reads the body of a submit under key and answers it from the
// retained job that holds key, if there is one: as the first submit was
// answered (answerAdmitted) when the body is the same, byte for byte, 422
// when it is not. It returns done true when it answered (a replay, a
// conflict, or a refusal of the body's media type or size, or a failed
// store); else it returns the body's digest and leaves the body, read, for
// parseRequest, and the caller admits under the key, which decides
// again, atomically with the admission. It calls release, which gives back
// the body's share of the byte budget, once it has answered or is about
// to answer, so that a replay that waits (Prefer: wait) holds no share.
//
// The key is looked up before the body is parsed, so that a replay costs a
// read of the ledger, as a GET of the job does, not a parse and an
// admission (BenchmarkKeyedReplay); the same bytes were parsed when the
// job was created. The price is that "the same body" is byte for byte:
// the same request with other spacing is another body.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, key string, release func()) (string, bool) {
	if !jsonMediaType(contentType(r.Header)) {
		release()
		w.Header().Set("Accept-Post", "application/json")
		writeProblem(w, http.StatusUnsupportedMediaType, detailMediaType, nil)
		return "", true
	}
	raw, err := readBody(w, r, s.cfg.MaxBodyBytes)
	switch {
	case err == nil:
	case tooLarge(err):
		release()
		writeProblem(w, http.StatusRequestEntityTooLarge, detailTooLarge, nil)
		return "", true
	case timedOut(err):
		release()
		writeProblem(w, http.StatusRequestTimeout, detailBodyTimeout, nil)
		return "", true
	default:
		release()
		writeProblem(w, http.StatusBadRequest, detailBadJSON, nil) // the body broke off
		return "", true
	}
	// The digest is spelled out in an array on the stack and compared as
	// such: only a submit that goes on to be admitted needs it as a string.
	sum := sha256.Sum256(raw)
	var digest [2 * sha256.Size]byte
	hex.Encode(digest[:], sum[:])
	id, held, err := s.store.LookupKey(r.Context(), key)
	if errors.Is(err, ledger.ErrNotFound) {
		r.Body = io.NopCloser(bytes.NewReader(raw))
		return string(digest[:]), false
	}
	release()
	switch {
	case err != nil:
		s.storeFailed(w, r, err)
	case held != string(digest[:]): // compared without a copy
		writeProblem(w, http.StatusUnprocessableEntity, wire.DetailKeyConflict, nil)
	default:
		s.answerAdmitted(w, r, id)
	}
	return "", true
}

// contentType is the first Content-Type of h, as h.Get("Content-Type")
// without canonicalizing a key that is canonical already.
func contentType(h http.Header) string {
	if v := h["Content-Type"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// readBody reads the whole body of r, at most max bytes (an
// *http.MaxBytesError beyond). When its Content-Length is known and within
// max, the body is read into a buffer of that length, and no
// http.MaxBytesReader is needed: an http.Server's body of a known length
// ends after that many bytes, and no more than that many are read.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= max {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}
