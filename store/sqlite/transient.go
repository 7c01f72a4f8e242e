package sqlite

import (
	"errors"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Transient reports whether err, a failure of one of the Store's calls,
// may pass if the call is tried again: a full disk (SQLITE_FULL), an I/O
// error, a busy or locked database, memory that ran out. A failed write
// changed nothing, so it may be tried again. Any other error is lasting
// (a damaged file, one no longer writable) or none of the database's.
func (s *Store) Transient(err error) bool {
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM:
		return true
	}
	return false
}
