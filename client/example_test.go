package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// A job's whole cycle against a server running the echo model: submit,
// wait until it ends, read its result.
func Example() {
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

	c, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	acc, err := c.Submit(ctx, client.Request{TaskID: "t1", Params: json.RawMessage(`{"greeting":"hello"}`)})
	if errors.Is(err, client.ErrQueueFull) {
		var e *client.Error
		errors.As(err, &e)
		fmt.Println("queue full; retry in", e.RetryAfter)
		return
	}
	if err != nil {
		panic(err)
	}
	snap, err := c.Wait(ctx, acc.JobID, 5*time.Second)
	if err != nil {
		panic(err)
	}
	res, err := c.Result(ctx, acc.JobID)
	if err != nil {
		panic(err)
	}
	fmt.Println(snap.State, res.TaskID, string(res.Result))
	// Output: DONE t1 {"greeting":"hello"}
}
