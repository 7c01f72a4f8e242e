package jobapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// GET /jobs?state=&task_id=&limit=&cursor= lists the retained jobs, newest
// first by admission, a page at a time (ledger.Ledger.List): each item is
// the body GET /jobs/{id} returns, and next_cursor, absent on the last
// page, resumes the walk. The cursor is the store's admission ordinal, so a
// walk lists no job twice and misses none retained throughout it, whatever
// is submitted or evicted between its pages. Bad parameters are 400 and
// read nothing.

// Problem details of GET /jobs.
var detailBadState = "state must be one of " + stateNames()

const (
	detailBadLimit  = "limit must be a positive integer"
	detailBadCursor = "cursor is not one this server gave"
	detailBadTask   = "task_id must be given at most once"
)

// listJobs is GET /jobs.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	q, detail := parseListQuery(r.URL.Query())
	if detail != "" {
		writeProblem(w, http.StatusBadRequest, detail, nil)
		return
	}
	page, err := s.store.List(scoped(r), q)
	switch {
	case errors.Is(err, ledger.ErrBadCursor):
		writeProblem(w, http.StatusBadRequest, detailBadCursor, nil)
	case errors.Is(err, ledger.ErrBadQuery):
		writeProblem(w, http.StatusBadRequest, detailBadLimit, nil) // parseListQuery lets no other through
	case err != nil:
		s.storeFailed(w, r, err)
	default:
		writeList(w, page, s.jobTTL)
	}
}

// parseListQuery reads the parameters of GET /jobs, each at most once:
// state, a state's wire name; task_id; limit, digits for a positive
// integer (beyond ledger.MaxListLimit it lists that many); cursor, passed
// to the store, which checks it. It returns the problem detail of the
// first bad one, or "".
func parseListQuery(v map[string][]string) (ledger.ListQuery, string) {
	var q ledger.ListQuery
	if vals, ok := v["state"]; ok {
		st, found := ledger.State(0), false
		if len(vals) == 1 {
			st, found = ledgertype.ParseState(vals[0])
		}
		if !found {
			return q, detailBadState
		}
		q.ByState, q.State = true, st
	}
	if vals, ok := v["task_id"]; ok {
		if len(vals) != 1 {
			return q, detailBadTask
		}
		q.ByTaskID, q.TaskID = true, vals[0] // present and empty: the jobs without one
	}
	if vals, ok := v["limit"]; ok {
		n, ok := parseLimit(vals)
		if !ok {
			return q, detailBadLimit
		}
		q.Limit = n
	}
	if vals, ok := v["cursor"]; ok {
		if len(vals) != 1 || vals[0] == "" {
			return q, detailBadCursor
		}
		q.Cursor = vals[0]
	}
	return q, ""
}

// stateNames lists the states' wire names, comma-separated.
func stateNames() string {
	var names []string
	for _, st := range ledgertype.States() {
		names = append(names, st.String())
	}
	return strings.Join(names, ", ")
}

// parseLimit reads one limit: digits only, at least 1; digits too large
// for an int are the cap.
func parseLimit(vals []string) (int, bool) {
	if len(vals) != 1 || vals[0] == "" {
		return 0, false
	}
	for _, c := range vals[0] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(vals[0])
	switch {
	case err != nil:
		return ledger.MaxListLimit, true // only digits: beyond an int
	case n < 1:
		return 0, false
	}
	return min(n, ledger.MaxListLimit), true
}

// writeList writes the page as a wire.Page, each job encoded as GET
// /jobs/{id} encodes it.
func writeList(w http.ResponseWriter, page ledger.Page, ttl time.Duration) {
	bp := bufPool.Get().(*[]byte)
	buf := appendList((*bp)[:0], page, ttl)
	buf = append(buf, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(buf) // the client went away
	*bp = buf
	bufPool.Put(bp)
}

// appendList appends the JSON encoding of the page as a wire.Page.
func appendList(buf []byte, page ledger.Page, ttl time.Duration) []byte {
	buf = append(buf, `{"jobs":[`...)
	for i, snap := range page.Jobs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = wire.AppendSnapshot(buf, newSnapshotBody(snap, ttl))
	}
	buf = append(buf, ']')
	if page.Next != "" {
		buf = append(buf, `,"next_cursor":`...)
		buf = wire.AppendString(buf, page.Next)
	}
	return append(buf, '}')
}
