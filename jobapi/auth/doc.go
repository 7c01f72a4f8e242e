// Package auth guards the job API with bearer tokens: a file of tokens,
// each kept as its SHA-256 with the tenant it acts for and its role
// (Keys), and a middleware that answers 401 to a request without a known
// token and 403 to one whose role may not do what it asks (Middleware).
//
// The file never holds a token, only its digest, so a copy of it lets
// nobody in. A presented token is hashed and its digest looked up, the
// candidate compared in constant time. The key set can be swapped while
// the server runs: a request is checked against the set current when it
// arrives.
//
// # Usage
//
//	keys, err := auth.ReadFile("tokens.txt")
//	if err != nil { ... }
//	mw := auth.New(srv, keys) // srv is the jobapi.Server
//	httpSrv := &http.Server{Handler: mw}
//	...
//	mw.SetKeys(newKeys) // on SIGHUP: a removed token stops working at once
//
// A handler behind the middleware learns who called with FromContext.
// docs/http.md describes the file and the answers.
package auth
