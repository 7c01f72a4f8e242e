// Package config reads jobserver's configuration: the keys of a JSON
// config file and their ranges, over the defaults, and the forms of the
// key "store". It opens nothing and imports no store.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"time"

	"github.com/jobledger/jobledger/jobapi"
)

// Defaults of the binary's own keys. docs/http.md lists every key, its
// unit and its default.
const (
	DefaultListen       = "127.0.0.1:8080"
	defaultReadTimeout  = 30 * time.Second
	defaultWriteTimeout = 60 * time.Second
	defaultIdleTimeout  = 60 * time.Second
	DefaultStore        = "memory"
)

// maxMillis is the largest millisecond count a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// Config is the binary's configuration: the handler's (jobapi.Config) and
// the keys that only the binary reads.
type Config struct {
	jobapi.Config
	// Listen is the address to listen on (JSON "listen").
	Listen string
	// ReadTimeout, WriteTimeout and IdleTimeout are the http.Server's
	// timeouts (JSON "read_timeout", "write_timeout", "idle_timeout", in
	// milliseconds; zero means none).
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// Store names the store that keeps the jobs (JSON "store"), in one of
	// the forms of ParseStore: "memory", the default, loses its jobs when
	// the process ends.
	Store string
	// Replica names this server among the replicas that share a
	// PostgreSQL store (JSON "replica"): the owner of the jobs it runs.
	// Each live replica needs a name of its own, kept across its restarts.
	// Empty means the store's default, the name of a single server. The
	// other stores, of one process, ignore it.
	Replica string
	// Lease is how long the lease of a job running on a replica of a
	// PostgreSQL store lasts without renewal (JSON "lease", in
	// milliseconds): once a replica dies, its jobs end FAILED "worker
	// lost" when their leases lapse. Zero means the store's default. The
	// other stores ignore it.
	Lease time.Duration
	// TokensFile names the token file (JSON "tokens_file", package
	// jobapi/auth): with it every route but /healthz needs a bearer
	// token. Empty means no tokens, and then the server listens only on
	// a loopback address unless started with -insecure.
	TokensFile string
	// TLSCert and TLSKey name the PEM files of the certificate chain and
	// its private key (JSON "tls_cert", "tls_key"): both given, the server
	// serves HTTPS, TLS 1.2 at least; both empty, plain HTTP.
	TLSCert string
	TLSKey  string
}

// Default is the configuration of a start with no config file and no
// flags.
func Default() Config {
	return Config{
		Config:       jobapi.DefaultConfig(),
		Listen:       DefaultListen,
		ReadTimeout:  defaultReadTimeout,
		WriteTimeout: defaultWriteTimeout,
		IdleTimeout:  defaultIdleTimeout,
		Store:        DefaultStore,
	}
}

// fileConfig is the JSON form of Config: every key optional, durations in
// milliseconds.
type fileConfig struct {
	Listen            *string `json:"listen"`
	ReadTimeout       *int64  `json:"read_timeout"`
	WriteTimeout      *int64  `json:"write_timeout"`
	IdleTimeout       *int64  `json:"idle_timeout"`
	Workers           *int    `json:"workers"`
	MaxBodyBytes      *int64  `json:"max_body_bytes"`
	MaxReplyBytes     *int64  `json:"max_reply_bytes_in_flight"`
	MaxPixels         *int    `json:"max_pixels"`
	MaxWait           *int64  `json:"max_wait"`
	Model             *string `json:"model"`
	AsyncEnabled      *bool   `json:"async_enabled"`
	AsyncTimeout      *int64  `json:"async_timeout"`
	AsyncMaxQueue     *int    `json:"async_max_queue"`
	AsyncJobTTL       *int64  `json:"async_job_ttl"`
	AsyncMaxCompleted *int    `json:"async_max_completed"`
	Store             *string `json:"store"`
	Replica           *string `json:"replica"`
	Lease             *int64  `json:"lease"`
	TokensFile        *string `json:"tokens_file"`
	TLSCert           *string `json:"tls_cert"`
	TLSKey            *string `json:"tls_key"`
}

// Parse reads a JSON config object: the keys of docs/http.md, each
// optional, over Default. It refuses unknown keys, values of the
// wrong type and values out of range, wrapping jobapi.ErrInvalidConfig
// with a message that names the key. It never panics, whatever data holds.
func Parse(data []byte) (Config, error) {
	cfg := Default()
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return cfg, fmt.Errorf("%w: want a JSON object", jobapi.ErrInvalidConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var f fileConfig
	if err := dec.Decode(&f); err != nil {
		return cfg, fmt.Errorf("%w: %v", jobapi.ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%w: data after the JSON object", jobapi.ErrInvalidConfig)
	}
	if err := f.apply(&cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Read is Parse on everything r holds, up to 1 MiB.
func Read(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Default(), fmt.Errorf("%w: %v", jobapi.ErrInvalidConfig, err)
	}
	return Parse(data)
}

// apply copies the keys that f sets into cfg, converting milliseconds.
func (f fileConfig) apply(cfg *Config) error {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&cfg.Listen, f.Listen)
	set(&cfg.Model, f.Model)
	set(&cfg.Store, f.Store)
	set(&cfg.Replica, f.Replica)
	set(&cfg.TokensFile, f.TokensFile)
	set(&cfg.TLSCert, f.TLSCert)
	set(&cfg.TLSKey, f.TLSKey)
	if f.Workers != nil {
		cfg.Workers = *f.Workers
	}
	if f.MaxBodyBytes != nil {
		cfg.MaxBodyBytes = *f.MaxBodyBytes
	}
	if f.MaxReplyBytes != nil {
		cfg.MaxReplyBytesInFlight = *f.MaxReplyBytes
	}
	if f.MaxPixels != nil {
		cfg.MaxPixels = *f.MaxPixels
	}
	if f.AsyncEnabled != nil {
		cfg.AsyncEnabled = *f.AsyncEnabled
	}
	if f.AsyncMaxQueue != nil {
		cfg.AsyncMaxQueue = *f.AsyncMaxQueue
	}
	if f.AsyncMaxCompleted != nil {
		cfg.AsyncMaxCompleted = *f.AsyncMaxCompleted
	}
	for _, d := range []struct {
		key string
		src *int64
		dst *time.Duration
	}{
		{"max_wait", f.MaxWait, &cfg.MaxWait},
		{"async_timeout", f.AsyncTimeout, &cfg.AsyncTimeout},
		{"async_job_ttl", f.AsyncJobTTL, &cfg.AsyncJobTTL},
		{"read_timeout", f.ReadTimeout, &cfg.ReadTimeout},
		{"write_timeout", f.WriteTimeout, &cfg.WriteTimeout},
		{"idle_timeout", f.IdleTimeout, &cfg.IdleTimeout},
		{"lease", f.Lease, &cfg.Lease},
	} {
		if d.src == nil {
			continue
		}
		ms, err := Millis(d.key, *d.src)
		if err != nil {
			return err
		}
		*d.dst = ms
	}
	return nil
}

// Millis converts a millisecond count from a config file or flag into a
// Duration, refusing negative counts and counts a Duration cannot hold.
func Millis(key string, ms int64) (time.Duration, error) {
	if ms < 0 || ms > maxMillis {
		return 0, fmt.Errorf("%w: %s: %d is not a number of milliseconds in [0, %d]", jobapi.ErrInvalidConfig, key, ms, maxMillis)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Validate reports the first value of c that is out of range, wrapping
// jobapi.ErrInvalidConfig with a message naming its JSON key: the
// listening address, then the handler's keys (jobapi.Config.Validate),
// then the binary's other keys.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{jobapi.ErrInvalidConfig, key}, args...)...)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return bad("listen", "%q is not host:port", c.Listen)
	}
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case c.ReadTimeout < 0:
		return bad("read_timeout", "%v is negative", c.ReadTimeout)
	case c.WriteTimeout < 0:
		return bad("write_timeout", "%v is negative", c.WriteTimeout)
	case c.IdleTimeout < 0:
		return bad("idle_timeout", "%v is negative", c.IdleTimeout)
	case c.Lease < 0:
		return bad("lease", "%v is negative", c.Lease)
	}
	if _, _, err := ParseStore(c.Store); err != nil {
		return bad("store", "%v", err)
	}
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		return bad("tls_key", "missing: tls_cert %q needs its key", c.TLSCert)
	case c.TLSKey != "" && c.TLSCert == "":
		return bad("tls_cert", "missing: tls_key %q needs its certificate", c.TLSKey)
	}
	return nil
}
