package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
)

// TestList: List walks GET /jobs by its cursor, newest first, with the
// filters; a bad limit is a 400 *Error.
func TestList(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	var ids []string
	for _, task := range []string{"a", "b", "a"} {
		acc, err := c.Submit(ctx, client.Request{TaskID: task})
		require.NoError(t, err)
		_, err = c.Wait(ctx, acc.JobID, 10*time.Second)
		require.NoError(t, err)
		ids = append(ids, acc.JobID)
	}
	var walked []string
	q := client.ListQuery{Limit: 2}
	for range 10 {
		p, err := c.List(ctx, q)
		require.NoError(t, err)
		for _, s := range p.Jobs {
			walked = append(walked, s.JobID)
		}
		if p.NextCursor == "" {
			break
		}
		q.Cursor = p.NextCursor
	}
	require.Equal(t, []string{ids[2], ids[1], ids[0]}, walked)

	p, err := c.List(ctx, client.ListQuery{State: client.Done, TaskID: "a"})
	require.NoError(t, err)
	require.Len(t, p.Jobs, 2)
	require.Equal(t, ids[2], p.Jobs[0].JobID)
	require.Equal(t, client.Done, p.Jobs[0].State)
	require.Empty(t, p.NextCursor)

	untasked, err := c.Submit(ctx, client.Request{})
	require.NoError(t, err)
	p, err = c.List(ctx, client.ListQuery{ByTaskID: true})
	require.NoError(t, err)
	require.Len(t, p.Jobs, 1, "the jobs submitted without a task id")
	require.Equal(t, untasked.JobID, p.Jobs[0].JobID)

	_, err = c.List(ctx, client.ListQuery{Limit: -1})
	var e *client.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, http.StatusBadRequest, e.StatusCode)
	require.Equal(t, "limit must be a positive integer", e.Detail)
}
