package postgres

import (
	"strings"
	"unicode/utf8"
)

// PostgreSQL's text holds valid UTF-8 without NUL bytes (in a UTF8
// database, the only encoding the store is tested on), and fails a
// statement that binds any other string with SQLSTATE 22021. So the
// store never sends one: an id, key or task id no job can have is
// answered without a query (ErrNotFound, an empty page), a task id, key or
// digest that cannot be stored is refused (ledger.ErrUnstorable), and an
// end's cause text is made storable (storableText). The ids the store
// issues itself (Config.NewID's default) are ASCII.

// storable reports whether text can be stored as PostgreSQL text.
func storable(text string) bool {
	return utf8.ValidString(text) && strings.IndexByte(text, 0) < 0
}

// storableText is msg with each run of invalid UTF-8 bytes, and each NUL
// byte, replaced by U+FFFD: the error message an end stores.
func storableText(msg string) string {
	if storable(msg) {
		return msg
	}
	return strings.ReplaceAll(strings.ToValidUTF8(msg, "\uFFFD"), "\x00", "\uFFFD")
}
