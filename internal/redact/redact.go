// Package redact removes the passwords from a store's value (a PostgreSQL
// URL or DSN) and from every text that may quote one: errors, log lines,
// the listener's state in /healthz.
package redact

import (
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// redactedMask replaces each password, as net/url's URL.Redacted writes it.
const redactedMask = "xxxxx"

var (
	// urlUserPassword is the password of a URL's user info: what follows
	// the first ':' of the user info, up to its last '@' before the end of
	// the authority.
	urlUserPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*):[^/?#\s]*@`)
	// keywordPassword is a password or sslpassword keyword of a DSN, or a
	// URL's parameter of that name: its value single-quoted (libpq's
	// quoting, with backslash escapes), or up to a space, '&' or a quote.
	keywordPassword = regexp.MustCompile("(?i)((?:ssl)?password\\s*=\\s*)(?:'(?:[^'\\\\]|\\\\.)*'?|[^\\s&'\"`]*)")
)

// Store returns v, the value of the key "store" or any text that may
// hold one (an error's message), with every password in it replaced by
// xxxxx: a URL's user info password, its password and sslpassword
// parameters (under any spelling of their names that decodes to them), and
// the password= and sslpassword= keywords of a key=value DSN, quoted or not.
func Store(v string) string {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && !strings.ContainsAny(v, " \t\n") {
		u.RawQuery = redactQuery(u.RawQuery)
		v = u.Redacted()
	}
	v = urlUserPassword.ReplaceAllString(v, "${1}:"+redactedMask+"@")
	return keywordPassword.ReplaceAllString(v, "${1}"+redactedMask)
}

// redactQuery is the raw query q with the value of every parameter whose
// name decodes to password or sslpassword (in any case) replaced by the
// mask, the rest of q as it was.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		key, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if n := strings.ToLower(name); hasValue && (n == "password" || n == "sslpassword") {
			parts[i] = key + "=" + redactedMask
		}
	}
	return strings.Join(parts, "&")
}

// Error is Err with its message passed through Store, for an error that
// may quote the store (a driver's); errors.Is and errors.As see Err itself.
type Error struct{ Err error }

func (e Error) Error() string { return Store(e.Err.Error()) }
func (e Error) Unwrap() error { return e.Err }

// Handler is a slog.Handler that passes the message and every
// string or error attribute through Store: the logger a store gets,
// whose lines (a listener's connection errors) may quote its URL. It costs
// a scan of each string, so the server's own logger, which writes a line
// per job, does without.
type Handler struct{ H slog.Handler }

func (r Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.H.Enabled(ctx, l)
}

func (r Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Store(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.H.Handle(ctx, out)
}

func (r Handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a)
	}
	return Handler{r.H.WithAttrs(out)}
}

func (r Handler) WithGroup(name string) slog.Handler {
	return Handler{r.H.WithGroup(name)}
}

// redactAttr is a with its strings and errors, in groups too, passed
// through Store; an error becomes the string of its message.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Store(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]slog.Attr, len(attrs))
		for i, g := range attrs {
			out[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Store(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
