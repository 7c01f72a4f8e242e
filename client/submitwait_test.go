package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// TestSubmitWait: a job that ends within the wait comes back with its
// result (DONE) or its terminal snapshot (FAILED), and the wait applied; a
// wait under a second is none, and the reply is Submit's 202.
func TestSubmitWait(t *testing.T) {
	c, ts := serve(t, "/api", nil)
	ctx := context.Background()

	out, err := c.SubmitWait(ctx, client.Request{TaskID: "d", Params: json.RawMessage(`{"k":1}`)}, time.Minute)
	require.NoError(t, err)
	require.True(t, out.Ended())
	require.Equal(t, client.Done, out.State)
	require.Equal(t, 30*time.Second, out.Applied, "capped at max_wait")
	require.Equal(t, ts.URL+"/api/jobs/"+out.JobID, out.Location.String())
	require.Nil(t, out.Snapshot)
	require.Equal(t, &client.Result{JobID: out.JobID, TaskID: "d", State: client.Done, Result: json.RawMessage(`{"k":1}`)}, out.Result)

	out, err = c.SubmitWait(ctx, client.Request{TaskID: "f", Params: json.RawMessage(`{"fail":"boom"}`)}, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, out.Applied)
	require.Nil(t, out.Result)
	require.Equal(t, client.Failed, out.Snapshot.State)
	require.Equal(t, "boom", out.Snapshot.Error)
	require.False(t, out.Snapshot.ExpiresAt.IsZero())

	out, err = c.SubmitWait(ctx, client.Request{TaskID: "n"}, 999*time.Millisecond)
	require.NoError(t, err)
	require.False(t, out.Ended())
	require.Equal(t, client.Pending, out.State)
	require.Zero(t, out.Applied)
	require.NotNil(t, out.Location)
}

// TestSubmitWaitRefused: a refusal is Submit's *Error.
func TestSubmitWaitRefused(t *testing.T) {
	c, _ := serve(t, "", func(cfg *jobapi.Config) { cfg.AsyncMaxQueue = 0 })
	_, err := c.SubmitWait(context.Background(), client.Request{}, time.Second)
	require.ErrorIs(t, err, client.ErrQueueFull)
}

// TestSubmitKeyed: a retry under the key answers the same job; another
// request under it is ErrKeyConflict.
func TestSubmitKeyed(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	req := client.Request{TaskID: "k", Params: json.RawMessage(`{"n":1}`)}
	first, err := c.SubmitKeyed(ctx, "key-1", req)
	require.NoError(t, err)
	again, err := c.SubmitKeyed(ctx, "key-1", req)
	require.NoError(t, err)
	require.Equal(t, first, again)

	_, err = c.SubmitKeyed(ctx, "key-1", client.Request{TaskID: "other"})
	require.ErrorIs(t, err, client.ErrKeyConflict)
	require.Equal(t, 422, apiError(t, err).StatusCode)
	_, err = c.SubmitKeyed(ctx, "", req)
	require.Equal(t, 400, apiError(t, err).StatusCode)
}
