package auth

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ErrInvalidKeys is wrapped by every error about the content of a token
// file; the message names the line.
var ErrInvalidKeys = errors.New("auth: invalid token file")

// A Role says what a token may do.
type Role int

const (
	// RoleSubmit may use the job API: submit, read, wait on and cancel
	// jobs, and /infer.
	RoleSubmit Role = iota + 1
	// RoleAdmin may do all that RoleSubmit may, list every job, and read
	// /metrics.
	RoleAdmin
	// RoleMetrics may read /metrics and nothing else.
	RoleMetrics
)

var roleNames = map[Role]string{RoleSubmit: "submit", RoleAdmin: "admin", RoleMetrics: "metrics"}

// String is the role as the token file writes it.
func (r Role) String() string {
	if n, ok := roleNames[r]; ok {
		return n
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// ParseRole reads a role as the token file writes it.
func ParseRole(s string) (Role, error) {
	for r, n := range roleNames {
		if n == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("role %q is not submit, admin or metrics", s)
}

// Identity is who a token acts for.
type Identity struct {
	Tenant string
	Role   Role
}

// MaxTenantLen is the longest tenant name the file accepts.
const MaxTenantLen = 64

// entry is one line of the file.
type entry struct {
	digest [sha256.Size]byte
	id     Identity
}

// Keys is a parsed token file. It never changes once built, so it is safe
// for concurrent use.
type Keys struct {
	// byPrefix finds the candidates for a digest by its first eight
	// bytes; the whole digest is then compared in constant time.
	byPrefix map[uint64][]entry
	n        int
	// metrics: some line has role metrics, so /metrics needs a token.
	metrics bool
	// maxQueue is the per-tenant bound of the lines that give one.
	maxQueue map[string]int
}

// Len is the number of tokens.
func (k *Keys) Len() int { return k.n }

// GuardsMetrics reports whether /metrics needs a token: whether some
// line has the role metrics.
func (k *Keys) GuardsMetrics() bool { return k.metrics }

// TenantMaxQueue is the bound on the live jobs of tenant that its lines
// give (max_queue=N), and whether they give one.
func (k *Keys) TenantMaxQueue(tenant string) (int, bool) {
	n, ok := k.maxQueue[tenant]
	return n, ok
}

// Lookup returns the identity of token, or false when the file does not
// hold its digest. Its timing depends on the token's digest, which tells
// nothing of any stored digest, and the comparison of the candidates it
// finds takes the same time whether they match or not.
func (k *Keys) Lookup(token string) (Identity, bool) {
	d := sha256.Sum256([]byte(token))
	var found Identity
	ok := 0
	for _, e := range k.byPrefix[binary.BigEndian.Uint64(d[:8])] {
		if subtle.ConstantTimeCompare(e.digest[:], d[:]) == 1 {
			found, ok = e.id, 1
		}
	}
	return found, ok == 1
}

// maxFileBytes bounds the token file read.
const maxFileBytes = 16 << 20

// ReadFile parses the token file at path.
func ReadFile(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := Parse(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Parse reads a token file: one token a line, written
//
//	SHA256HEX TENANT [role=submit|admin|metrics] [max_queue=N]
//
// fields separated by spaces or tabs; blank lines and lines whose first
// non-blank character is # are ignored. It refuses, naming the first bad
// line, a malformed digest, a tenant that is not 1 to MaxTenantLen of
// [A-Za-z0-9._-], an unknown field, a digest given twice, two bounds for
// one tenant that differ, and a file with no token. It never panics,
// whatever r holds.
func Parse(r io.Reader) (*Keys, error) {
	k := &Keys{byPrefix: map[uint64][]entry{}, maxQueue: map[string]int{}}
	seen := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	total := 0
	for line := 1; sc.Scan(); line++ {
		total += len(sc.Bytes()) + 1
		if total > maxFileBytes {
			return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidKeys, maxFileBytes)
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, bound, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalidKeys, line, err)
		}
		if first, dup := seen[e.digest]; dup {
			return nil, fmt.Errorf("%w: line %d: the digest of line %d again", ErrInvalidKeys, line, first)
		}
		seen[e.digest] = line
		if bound >= 0 {
			if old, ok := k.maxQueue[e.id.Tenant]; ok && old != bound {
				return nil, fmt.Errorf("%w: line %d: max_queue=%d, where an earlier line of tenant %q gives %d",
					ErrInvalidKeys, line, bound, e.id.Tenant, old)
			}
			k.maxQueue[e.id.Tenant] = bound
		}
		p := binary.BigEndian.Uint64(e.digest[:8])
		k.byPrefix[p] = append(k.byPrefix[p], e)
		k.n++
		k.metrics = k.metrics || e.id.Role == RoleMetrics
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKeys, err)
	}
	if k.n == 0 {
		// A file cut short as it is rewritten reads as empty: taken, it
		// would lock every client out.
		return nil, fmt.Errorf("%w: no token in it", ErrInvalidKeys)
	}
	return k, nil
}

// parseLine reads one line that is neither blank nor a comment; bound is
// -1 when the line gives none.
func parseLine(text string) (e entry, bound int, err error) {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return e, -1, errors.New("want SHA256HEX TENANT [role=ROLE] [max_queue=N]")
	}
	if len(fields[0]) != 2*sha256.Size {
		return e, -1, fmt.Errorf("the digest has %d characters, not %d hex digits", len(fields[0]), 2*sha256.Size)
	}
	if _, err := hex.Decode(e.digest[:], []byte(fields[0])); err != nil {
		return e, -1, errors.New("the digest is not hex")
	}
	if !validTenant(fields[1]) {
		return e, -1, fmt.Errorf("tenant %q is not 1 to %d of A-Z a-z 0-9 . _ -", fields[1], MaxTenantLen)
	}
	e.id = Identity{Tenant: fields[1], Role: RoleSubmit}
	bound = -1
	var sawRole bool
	for _, f := range fields[2:] {
		key, val, _ := strings.Cut(f, "=")
		switch {
		case key == "role" && !sawRole:
			sawRole = true
			if e.id.Role, err = ParseRole(val); err != nil {
				return e, -1, err
			}
		case key == "max_queue" && bound < 0:
			n, err := strconv.ParseUint(val, 10, 31) // at most MaxInt32
			if err != nil {
				return e, -1, fmt.Errorf("max_queue=%q is not an integer in [0, %d]", val, math.MaxInt32)
			}
			bound = int(n)
		case key == "role" || key == "max_queue":
			return e, -1, fmt.Errorf("%s given twice", key)
		default:
			return e, -1, fmt.Errorf("unknown field %q: want role=ROLE or max_queue=N", f)
		}
	}
	return e, bound, nil
}

// validTenant reports whether s is 1 to MaxTenantLen of [A-Za-z0-9._-].
func validTenant(s string) bool {
	if len(s) == 0 || len(s) > MaxTenantLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// tokenPrefix marks the tokens NewToken makes, so that a secret scanner
// can find one left where it should not be.
const tokenPrefix = "jl_"

// NewToken makes a token of 32 random bytes for tenant and role, and the
// line of the token file that admits it. The token is printed once and
// kept nowhere: only its digest goes in the file.
func NewToken(tenant string, role Role) (token, line string, err error) {
	if !validTenant(tenant) {
		return "", "", fmt.Errorf("tenant %q is not 1 to %d of A-Z a-z 0-9 . _ -", tenant, MaxTenantLen)
	}
	if _, ok := roleNames[role]; !ok {
		return "", "", fmt.Errorf("unknown role %v", role)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	d := sha256.Sum256([]byte(token))
	line = hex.EncodeToString(d[:]) + " " + tenant
	if role != RoleSubmit {
		line += " role=" + role.String()
	}
	return token, line, nil
}
