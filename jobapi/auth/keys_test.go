package auth_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi/auth"
)

// digest is the hex SHA-256 of token, as a line of the file gives it.
func digest(token string) string {
	d := sha256.Sum256([]byte(token))
	return hex.EncodeToString(d[:])
}

func TestParseKeys(t *testing.T) {
	file := strings.Join([]string{
		"# tokens of the acme team",
		"",
		"   " + digest("tok-a") + "  acme",
		digest("tok-b") + "\tacme\trole=admin max_queue=4",
		strings.ToUpper(digest("tok-m")) + " prom role=metrics",
		"  # indented comment",
		digest("tok-c") + " beta max_queue=0 role=submit",
	}, "\n")
	k, err := auth.Parse(strings.NewReader(file))
	require.NoError(t, err)
	require.Equal(t, 4, k.Len())
	require.True(t, k.GuardsMetrics())
	for token, want := range map[string]auth.Identity{
		"tok-a": {Tenant: "acme", Role: auth.RoleSubmit},
		"tok-b": {Tenant: "acme", Role: auth.RoleAdmin},
		"tok-m": {Tenant: "prom", Role: auth.RoleMetrics},
		"tok-c": {Tenant: "beta", Role: auth.RoleSubmit},
	} {
		id, ok := k.Lookup(token)
		require.True(t, ok, token)
		require.Equal(t, want, id, token)
	}
	for _, token := range []string{"", "tok-", "tok-a ", "TOK-A", digest("tok-a"), strings.ToUpper(digest("tok-m"))} {
		_, ok := k.Lookup(token)
		require.False(t, ok, "%q must not be a token", token)
	}
	n, ok := k.TenantMaxQueue("acme")
	require.True(t, ok)
	require.Equal(t, 4, n)
	n, ok = k.TenantMaxQueue("beta")
	require.True(t, ok)
	require.Equal(t, 0, n)
	_, ok = k.TenantMaxQueue("prom")
	require.False(t, ok)

	noMetrics, err := auth.Parse(strings.NewReader(digest("tok-a") + " acme"))
	require.NoError(t, err)
	require.False(t, noMetrics.GuardsMetrics())
}

func TestParseKeysRefusesNamingTheLine(t *testing.T) {
	d := digest("x")
	for name, tc := range map[string]struct {
		file, want string
	}{
		"digest only":        {d, "line 1: want SHA256HEX TENANT"},
		"short digest":       {"# c\n" + d[:63] + " t", "line 2: the digest has 63 characters"},
		"not hex":            {"\n\n" + strings.Repeat("g", 64) + " t", "line 3: the digest is not hex"},
		"the token itself":   {"jl_abc t", "line 1: the digest has 6 characters"},
		"tenant with colon":  {d + " a:b", `line 1: tenant "a:b"`},
		"tenant too long":    {d + " " + strings.Repeat("t", 65), "line 1: tenant"},
		"unknown role":       {d + " t role=root", `line 1: role "root"`},
		"role twice":         {d + " t role=admin role=admin", "line 1: role given twice"},
		"bare role":          {d + " t admin", `line 1: unknown field "admin"`},
		"negative bound":     {d + " t max_queue=-1", "line 1: max_queue="},
		"bound too large":    {d + " t max_queue=2147483648", "line 1: max_queue="},
		"bound twice":        {d + " t max_queue=1 max_queue=1", "line 1: max_queue given twice"},
		"digest twice":       {d + " t\n" + strings.ToUpper(d) + " u", "line 2: the digest of line 1 again"},
		"bounds that differ": {d + " t max_queue=1\n" + digest("y") + " t max_queue=2", "line 2: max_queue=2"},
		"unknown key":        {d + " t ttl=5", `line 1: unknown field "ttl=5"`},
		"no token":           {"# nothing yet\n\n", "no token in it"},
		"empty":              {"", "no token in it"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := auth.Parse(strings.NewReader(tc.file))
			require.ErrorIs(t, err, auth.ErrInvalidKeys)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewToken(t *testing.T) {
	token, line, err := auth.NewToken("acme", auth.RoleAdmin)
	require.NoError(t, err)
	require.NotContains(t, line, token, "the line holds the digest, never the token")
	require.Equal(t, digest(token)+" acme role=admin", line)
	k, err := auth.Parse(strings.NewReader(line))
	require.NoError(t, err)
	id, ok := k.Lookup(token)
	require.True(t, ok)
	require.Equal(t, auth.Identity{Tenant: "acme", Role: auth.RoleAdmin}, id)

	other, line2, err := auth.NewToken("acme", auth.RoleSubmit)
	require.NoError(t, err)
	require.NotEqual(t, token, other)
	require.Equal(t, digest(other)+" acme", line2)

	_, _, err = auth.NewToken("a b", auth.RoleSubmit)
	require.ErrorContains(t, err, "tenant")
}

// FuzzParseKeys feeds arbitrary files to Parse: it never panics, refuses
// with ErrInvalidKeys naming a line (or saying the file holds no token),
// or accepts a set in which the digest
// of each accepted line is no token (a file that lets the digest in would
// let anyone who reads it in).
func FuzzParseKeys(f *testing.F) {
	d := digest("seed")
	for _, s := range []string{
		"", "#", "\n\n", d + " t", d + " t role=admin max_queue=3", d + " t role=metrics",
		d + " t\n" + d + " t", d + " " + strings.Repeat("x", 70), d + " t role=",
		d + " t max_queue=", d + " t max_queue=1 max_queue=2", "\x00\xff " + d, d + "\tt\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		k, err := auth.Parse(strings.NewReader(file))
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidKeys) || !strings.Contains(err.Error(), "line ") &&
				!strings.Contains(err.Error(), "bytes") && !strings.Contains(err.Error(), "no token") {
				t.Fatalf("Parse(%q) = %v: not ErrInvalidKeys naming a line", file, err)
			}
			return
		}
		for _, line := range strings.Split(file, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if _, ok := k.Lookup(fields[0]); ok {
				t.Fatalf("Parse(%q): the digest %q is let in as a token", file, fields[0])
			}
		}
	})
}

// TestLookupComparesWholeDigest: a line whose digest shares the first
// bytes of a token's, by which Lookup finds its candidates, is not that
// token's line; the whole digest decides, whatever the order of the lines.
func TestLookupComparesWholeDigest(t *testing.T) {
	d := digest("tok")
	last := "0"
	if d[63] == '0' {
		last = "1"
	}
	near := d[:63] + last // the same first 31 bytes, another last one
	k, err := auth.Parse(strings.NewReader(near + " mallory role=admin"))
	require.NoError(t, err)
	_, ok := k.Lookup("tok")
	require.False(t, ok, "a digest that differs in its last byte")

	for _, file := range []string{near + " mallory role=admin\n" + d + " acme", d + " acme\n" + near + " mallory role=admin"} {
		k, err := auth.Parse(strings.NewReader(file))
		require.NoError(t, err)
		id, ok := k.Lookup("tok")
		require.True(t, ok)
		require.Equal(t, auth.Identity{Tenant: "acme", Role: auth.RoleSubmit}, id)
	}
}
