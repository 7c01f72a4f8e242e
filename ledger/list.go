package ledger

import (
	"encoding/base64"
	"encoding/binary"
	"math"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Listing (Ledger.List): the retained jobs, newest first by admission, a
// page at a time. Every store gives each job an admission ordinal, a
// positive integer that grows with each admission and that the job keeps;
// a cursor names the ordinal a page ended at, and the next page lists the
// jobs whose ordinals are below it. So a walk of pages lists no job twice,
// and lists every job that was retained (and matched the query) for the
// whole walk, whatever is admitted or evicted between its pages.

// ListQuery selects a page of Ledger.List. The zero value lists the newest
// DefaultListLimit jobs in any state.
type ListQuery struct {
	// ByState keeps only the jobs in State.
	ByState bool
	State   State
	// ByTaskID keeps only the jobs submitted with TaskID: the empty
	// string keeps those submitted without one. A filter that is present
	// is a filter, whatever its value; TaskID without ByTaskID is
	// ErrBadQuery.
	ByTaskID bool
	TaskID   string
	// Limit is the most jobs a page holds: 0 means DefaultListLimit, more
	// than MaxListLimit means MaxListLimit; negative is ErrBadQuery.
	Limit int
	// Cursor is "" for the first page, else a Page.Next from the same
	// store (a cursor from another store, or of another query, lists what
	// lies below its ordinal there). One not made by a store is
	// ErrBadCursor.
	Cursor string

	_ struct{} // forbid positional literals
}

// Page is one page of Ledger.List.
type Page struct {
	// Jobs are the page's jobs, newest first, each the Snapshot of that
	// job at the moment the store read the page.
	Jobs []Snapshot
	// Next is the cursor of the next page, or "" when the walk is over. A
	// page may hold fewer than Limit jobs, even none, while Next is not
	// "": a store may bound the work of one page.
	Next string
}

// Page sizes.
const (
	DefaultListLimit = jobtable.DefaultListLimit
	MaxListLimit     = jobtable.MaxListLimit
)

var (
	// ErrBadQuery is List's answer to a negative limit, a state filter
	// that is no State, or a TaskID without ByTaskID.
	ErrBadQuery = ledgertype.ErrBadQuery
	// ErrBadCursor is List's answer to a cursor that no store made.
	ErrBadCursor = ledgertype.ErrBadCursor
)

// Resolve validates q and returns the store-level query: the limit
// resolved, the cursor decoded to the ordinal the page must stay below (0
// for none). It returns ErrBadQuery or ErrBadCursor, and is what every
// store calls first.
func (q ListQuery) Resolve() (jobtable.ListQuery, error) {
	before, err := DecodeCursor(q.Cursor)
	if err != nil {
		return jobtable.ListQuery{}, err
	}
	return jobtable.ListQuery{ByState: q.ByState, State: q.State, ByTaskID: q.ByTaskID, TaskID: q.TaskID, Limit: q.Limit, Before: before}.Normalized()
}

// EncodeCursor is the cursor of a page that ended at the job of admission
// ordinal ord, or "" for 0 (the walk is over): the ordinal's eight bytes,
// big-endian, in unpadded base64url. Clients treat it as opaque.
func EncodeCursor(ord uint64) string {
	if ord == 0 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, ord))
}

// DecodeCursor returns the ordinal of a cursor made by EncodeCursor, 0 for
// "", or ErrBadCursor for any other string: one that is not 11 characters
// of base64url, one with stray bits, and the ordinals 0 and beyond
// math.MaxInt64 (SQL stores keep ordinals in a signed 64-bit column). Each
// ordinal has one spelling.
func DecodeCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	if len(c) != 11 {
		return 0, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || len(b) != 8 {
		return 0, ErrBadCursor
	}
	ord := binary.BigEndian.Uint64(b)
	if ord == 0 || ord > math.MaxInt64 {
		return 0, ErrBadCursor
	}
	return ord, nil
}
