package jobapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// listRetained is the number of jobs BenchmarkListPage retains, and
// listPage the page it lists.
const (
	listRetained = 100_000
	listPage     = 50
)

// BenchmarkListPage compares GET /jobs?limit=50 (the subject) with 50
// GET /jobs/{id} of the same 50 jobs, the newest (the baseline), on a
// server that retains 100,000 finished jobs, on the memory, SQLite and
// PostgreSQL stores, alternately in one run, handler calls without the network.
// The target is a listing of 50 that costs less than 50 GETs: ratio (the 50
// GETs' time / the page's) above 1.
func BenchmarkListPage(b *testing.B) {
	cfg := ledger.Config{MaxQueue: 1 << 20, JobTTL: -1, MaxCompleted: -1}
	for _, store := range []struct {
		name string
		open func(b *testing.B) ledger.Ledger[jobapi.Request, json.RawMessage]
		// seeded: open returns the store with its jobs already in;
		// otherwise fillFinished admits and ends them through it.
		seeded bool
	}{
		{"memory", func(b *testing.B) ledger.Ledger[jobapi.Request, json.RawMessage] {
			l, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg)
			require.NoError(b, err)
			return l
		}, false},
		{"sqlite", func(b *testing.B) ledger.Ledger[jobapi.Request, json.RawMessage] {
			st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "jobs.db"), cfg, sqlite.Options{})
			require.NoError(b, err)
			return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{})
		}, false},
		{"postgres", func(b *testing.B) ledger.Ledger[jobapi.Request, json.RawMessage] {
			return openSeededPostgres(b, cfg, listRetained)
		}, true},
	} {
		b.Run(store.name, func(b *testing.B) {
			l := store.open(b)
			b.Cleanup(func() { require.NoError(b, l.Close()) }) // after the server's
			var newest []string
			if store.seeded {
				newest = newestIDs(b, l, listPage)
			} else {
				newest = fillFinished(b, l, listRetained, listPage)
			}
			srv, err := jobapi.New(l, jobapi.DefaultConfig(), jobapi.Options{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(b, err)
			b.Cleanup(func() {
				require.NoError(b, srv.Shutdown(context.Background()))
				require.NoError(b, srv.Close())
			})
			w := &discardWriter{h: http.Header{}}
			call := func(req *http.Request) error {
				clear(w.h)
				srv.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					return fmt.Errorf("%s: status %d", req.URL, w.status)
				}
				return nil
			}
			list := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/jobs?limit=%d", listPage), nil)
			gets := make([]*http.Request, len(newest))
			for i, id := range newest {
				gets[i] = httptest.NewRequest(http.MethodGet, "/jobs/"+id, nil)
			}
			benchcmp.Alternate(b, compareChunk,
				func() error { return call(list) },
				func() error {
					for _, req := range gets {
						if err := call(req); err != nil {
							return err
						}
					}
					return nil
				})
		})
	}
}

// fillFinished admits n jobs on l and fails each at once, from 64
// goroutines (so that a durable store commits them in batches), and
// returns the ids of the newest k, newest first.
func fillFinished(b *testing.B, l ledger.Ledger[jobapi.Request, json.RawMessage], n, k int) []string {
	b.Helper()
	ctx := context.Background()
	const workers = 64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				id, _, err := l.Submit(ctx, ledger.Submission{TaskID: "bench"}, jobapi.Request{TaskID: "bench"})
				if err == nil {
					_, err = l.Fail(ctx, id, errors.New("done"))
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(b, errors.Join(errs...))
	return newestIDs(b, l, k)
}

// newestIDs returns the ids of the newest k jobs of l, newest first.
func newestIDs(b *testing.B, l ledger.Ledger[jobapi.Request, json.RawMessage], k int) []string {
	b.Helper()
	page, err := l.List(context.Background(), ledger.ListQuery{Limit: k})
	require.NoError(b, err)
	require.Len(b, page.Jobs, k)
	ids := make([]string, k)
	for i, s := range page.Jobs {
		ids[i] = s.ID
	}
	return ids
}
