package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedactingHandler: the store's logger writes no password, in its
// message, its attributes, its groups, its errors or the attributes it was
// made with.
func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler{slog.NewJSONHandler(&buf, nil)}).With("store", "postgres://u:sekrit@h/db")
	log.WithGroup("g").Warn("dial postgres://u:sekrit@h/db failed",
		"error", errors.New("password=sekrit refused"),
		slog.Group("conn", "dsn", "host=h password='se krit'"), "n", 3)
	out := buf.String()
	require.NotContains(t, out, "sekrit")
	require.NotContains(t, out, "krit")
	require.Contains(t, out, `"store":"postgres://u:xxxxx@h/db"`)
	require.Contains(t, out, `"msg":"dial postgres://u:xxxxx@h/db failed"`)
	require.Contains(t, out, `"error":"password=xxxxx refused"`)
	require.Contains(t, out, `"n":3`)
}
