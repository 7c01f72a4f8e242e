package wire

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The snapshot is the hottest reply (status polls), so these encode by hand
// into the caller's buffer rather than through encoding/json's reflection,
// which halves the cost of GET /jobs/{id}. Each writes exactly the bytes
// encoding/json writes for the same value.

// AppendAccepted appends the JSON encoding of a, as encoding/json writes it.
func AppendAccepted(buf []byte, a Accepted) []byte {
	buf = append(buf, `{"job_id":`...)
	buf = AppendString(buf, a.JobID)
	buf = append(buf, `,"state":`...)
	buf = AppendString(buf, string(a.State))
	return append(buf, '}')
}

// AppendSnapshot appends the JSON encoding of b, as encoding/json writes it.
func AppendSnapshot(buf []byte, b Snapshot) []byte {
	buf = append(buf, `{"job_id":`...)
	buf = AppendString(buf, b.JobID)
	buf = append(buf, `,"task_id":`...)
	buf = AppendString(buf, b.TaskID)
	buf = append(buf, `,"state":`...)
	buf = AppendString(buf, string(b.State))
	if b.Error != "" {
		buf = append(buf, `,"error":`...)
		buf = AppendString(buf, b.Error)
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

// AppendString appends s as a JSON string with encoding/json's escaping
// (HTML-safe, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped).
func AppendString(buf []byte, s string) []byte {
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
