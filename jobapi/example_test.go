package jobapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// A server mounted under httptest, running the echo model synchronously.
func ExampleNew() {
	cfg := jobapi.DefaultConfig()
	cfg.Model = "echo"
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
	if err != nil {
		panic(err)
	}
	defer store.Close()
	srv, err := jobapi.New(store, cfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	ts := httptest.NewServer(srv)
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/infer", "application/json",
		strings.NewReader(`{"task_id": "t1", "params": {"greeting": "hello"}}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 {"task_id":"t1","result":{"greeting":"hello"}}
}

// A model of your own replaces the built-in one.
func ExampleModelFunc() {
	upper := jobapi.ModelFunc(func(_ context.Context, req jobapi.Request) (any, error) {
		return map[string]string{"task": strings.ToUpper(req.TaskID)}, nil
	})
	cfg := jobapi.DefaultConfig()
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
	if err != nil {
		panic(err)
	}
	defer store.Close()
	srv, err := jobapi.New(store, cfg, jobapi.Options{Model: upper, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/infer", strings.NewReader(`{"task_id": "abc"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output: 200 {"task_id":"abc","result":{"task":"ABC"}}
}
