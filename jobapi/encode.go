package jobapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// The snapshot is the hottest reply (status polls), so it is encoded by
// hand into a pooled buffer rather than through encoding/json's reflection:
// this halves the cost of GET /jobs/{id}. TestSnapshotEncoding checks that
// the output equals encoding/json's for the same snapshotBody.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeSnapshot writes b as a 200 (or status) JSON reply.
func writeSnapshot(w http.ResponseWriter, status int, b snapshotBody) {
	bp := bufPool.Get().(*[]byte)
	buf := appendSnapshot((*bp)[:0], b)
	buf = append(buf, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf) // the client went away
	*bp = buf
	bufPool.Put(bp)
}

// writeAcceptedBody writes the 202 of POST /jobs, acceptedBody for id, by
// hand as the snapshot is: an idempotent replay is this and a lookup
// (BenchmarkKeyedReplay). TestAcceptedEncoding checks it against
// encoding/json.
func writeAcceptedBody(w http.ResponseWriter, id string) {
	bp := bufPool.Get().(*[]byte)
	buf := appendAccepted((*bp)[:0], id)
	buf = append(buf, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	w.Write(buf) // the client went away
	*bp = buf
	bufPool.Put(bp)
}

// appendAccepted appends the JSON encoding of acceptedBody for id.
func appendAccepted(buf []byte, id string) []byte {
	buf = append(buf, `{"job_id":`...)
	buf = appendString(buf, id)
	return append(buf, `,"state":"PENDING"}`...)
}

// appendSnapshot appends the JSON encoding of b, as encoding/json writes it.
func appendSnapshot(buf []byte, b snapshotBody) []byte {
	buf = append(buf, `{"job_id":`...)
	buf = appendString(buf, b.JobID)
	buf = append(buf, `,"task_id":`...)
	buf = appendString(buf, b.TaskID)
	buf = append(buf, `,"state":`...)
	buf = appendString(buf, b.State)
	if b.Error != "" {
		buf = append(buf, `,"error":`...)
		buf = appendString(buf, b.Error)
	}
	buf = appendTime(buf, `,"created_at":`, b.CreatedAt)
	buf = appendTime(buf, `,"started_at":`, b.StartedAt)
	buf = appendTime(buf, `,"completed_at":`, b.CompletedAt)
	buf = appendTime(buf, `,"expires_at":`, b.ExpiresAt)
	return append(buf, '}')
}

func appendTime(buf []byte, key string, t time.Time) []byte {
	if t.IsZero() {
		return buf
	}
	buf = append(buf, key...)
	buf = append(buf, '"')
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escaping
// (HTML-safe, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped).
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, string(utf8.RuneError)...) // as encoding/json since Go 1.27
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\u202`...)
			buf = strconv.AppendInt(buf, int64(r&0xf), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
