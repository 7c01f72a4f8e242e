package redact_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/redact"
)

// TestStore: every spelling of a password in a store's value, or in
// a text that quotes one, is replaced by xxxxx, and the rest is left as it
// was.
func TestStore(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"memory", "memory"},
		{"sqlite:/var/lib/jobs.db", "sqlite:/var/lib/jobs.db"},
		{"postgres://postgres@127.0.0.1:5432/jobs", "postgres://postgres@127.0.0.1:5432/jobs"},
		{"postgres://127.0.0.1:5432/jobs?sslmode=disable", "postgres://127.0.0.1:5432/jobs?sslmode=disable"},
		{"postgres://postgres:sekrit@127.0.0.1:5432/jobs", "postgres://postgres:xxxxx@127.0.0.1:5432/jobs"},
		{"postgresql://u:se%40krit@h/db?sslmode=disable", "postgresql://u:xxxxx@h/db?sslmode=disable"},
		{"postgres://u:se@krit@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u@h/db?sslmode=disable&password=sekrit&x=1", "postgres://u@h/db?sslmode=disable&password=xxxxx&x=1"},
		{"postgres://u@h/db?PassWord=sekrit", "postgres://u@h/db?PassWord=xxxxx"},
		{"postgres://u@h/db?pass%77ord=sekrit", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"postgres://u@h/db?sslpassword=sekrit", "postgres://u@h/db?sslpassword=xxxxx"},
		{"host=h user=u password=sekrit dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"host=h password = 'se kr\\'it' dbname=db", "host=h password = xxxxx dbname=db"},
		{"postgres:host=h password=sekrit", "postgres:host=h password=xxxxx"},
		{`store: "postgres:host=h password=sekrit" is not a URL`, `store: "postgres:host=h password=xxxxx" is not a URL`},
		{`opening the store "postgres://postgres:sekrit@127.0.0.1:1/jobs": refused`, `opening the store "postgres://postgres:xxxxx@127.0.0.1:1/jobs": refused`},
		{"dial postgres://u:sekrit@h:1/db?password=sekrit2 failed", "dial postgres://u:xxxxx@h:1/db?password=xxxxx failed"},
	} {
		got := redact.Store(tc.in)
		require.Equal(t, tc.want, got, "Store(%q)", tc.in)
		require.NotContains(t, got, "sekrit")
		require.NotContains(t, got, "krit")
	}
}
