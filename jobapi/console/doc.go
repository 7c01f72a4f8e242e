// Package console is the operator's console of a job server: HTML pages
// under /console that show the server live (counts by state, the queue
// against its bound, rates over the last minutes, workers, the store's
// health) and its jobs (a filtered, paged listing, each job's timeline,
// result or error, and a cancel for a live one).
//
// It is a package of its own, beside jobapi rather than in it, because it
// needs nothing of jobapi's insides: it reads and cancels jobs through the
// job API's own handler, called in-process on the caller's behalf, and the
// server-wide figures through jobapi.Server.Overview. The API's rules (and
// whatever gates it) therefore apply to the console unchanged, and jobapi
// keeps no HTML. Its pages, style sheet and script are embedded; there is
// no build step and nothing is fetched from elsewhere.
//
// # Usage
//
//	con, err := console.New(console.Options{API: srv, Overview: srv.Overview})
//	if err != nil { ... }
//	defer con.Close()
//	httpSrv := &http.Server{Handler: console.Mount(srv, con)}
//
// Mount sends /console and the paths under it to the console and every
// other request to the API, so that a middleware in front of Mount's
// handler gates both. docs/console.md describes the pages, the refresh and
// the security headers.
package console
