// Package wire holds the bodies of the HTTP job API (docs/http.md,
// docs/openapi.yaml) and their fast encoder: the one definition that the
// server (package jobapi) writes and the client (package client) reads.
//
// It is a public package, not an internal one, because package client
// re-exports these types by alias: their fields and docs must be reachable
// by the name a user sees. It imports the standard library only.
package wire
