package jobapi

import "net/http"

// A request that carries both Transfer-Encoding: chunked and
// Content-Length may be an attempt at request smuggling: a proxy in front
// that framed it by Content-Length sees one request where the server,
// framing it by Transfer-Encoding as net/http does, may see two. RFC 9112
// §6.1 lets a server process such a request by its Transfer-Encoding alone,
// but says it MUST close the connection after the reply, so that no request
// hidden in the body is answered. net/http serves it and keeps the
// connection alive, and removes the Content-Length field before any handler
// runs, so a handler cannot tell it from a chunked request without one.

// closeAfterChunked makes the server close r's connection after its reply
// when r's body came with a Transfer-Encoding (chunked), with or without a
// Content-Length beside it: a chunked upload costs its client a new
// connection, and a request smuggled after such a body is never read.
func closeAfterChunked(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		w.Header().Set("Connection", "close")
	}
}
