package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// transient reports whether err is a failure that the same write may not
// meet if tried again: a lost or refused connection, the server shutting
// down or starting, a lock or idle timeout, a serialization failure or a
// deadlock.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.As(err, new(*pgconn.ConnectError))
	}
	switch pgErr.Code {
	case "40001", "40P01", "55P03", "25P03", "57P01", "57P02", "57P03", "53300":
		return true
	}
	return strings.HasPrefix(pgErr.Code, "08")
}
