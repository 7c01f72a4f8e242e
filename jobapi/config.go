package jobapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"time"

	"github.com/jobledger/jobledger/store/sqlite"
)

// Defaults that DefaultConfig and ParseConfig fill in. The JSON keys, their
// units and their defaults are listed in docs/http.md.
const (
	DefaultListen            = "127.0.0.1:8080"
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxBodyBytes      = 8 << 20
	DefaultMaxReplyBytes     = 64 << 20
	DefaultMaxPixels         = 1 << 24
	DefaultMaxWait           = 30 * time.Second
	DefaultModel             = "fingerprint"
	DefaultAsyncTimeout      = 30 * time.Second
	DefaultAsyncMaxQueue     = 16
	DefaultAsyncJobTTL       = 10 * time.Minute
	DefaultAsyncMaxCompleted = 1024
	DefaultStore             = "memory"
)

// maxMillis is the largest millisecond count a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// maxMaxBodyBytes is the ceiling of max_body_bytes: 128 MiB, half the
// most bytes the SQLite store takes in one write (sqlite.MaxValueBytes). A
// job's stored request is its body re-encoded, no longer than the body
// but for the escapes of its task id (maxTaskIDBytes at most), and the
// write that stores it adds the id, the task id and an idempotency key
// (an HTTP header), so any body within the ceiling can be stored.
const maxMaxBodyBytes = sqlite.MaxValueBytes / 2

// maxMaxReplyBytes is the ceiling of max_reply_bytes_in_flight: 1 TiB,
// far beyond any machine's memory, so that only nonsense is refused.
const maxMaxReplyBytes = 1 << 40

// maxMaxPixels is the ceiling of max_pixels: 2^30 pixels are 4 GiB as
// RGBA, more than one decode should ever take.
const maxMaxPixels = 1 << 30

// Config is the server's configuration. Start from DefaultConfig (or
// ParseConfig) and change what differs: the zero value is not valid, and New
// refuses it.
type Config struct {
	// Listen is the address cmd/jobserver listens on (JSON "listen"). The
	// handler itself does not use it.
	Listen string
	// ReadTimeout, WriteTimeout and IdleTimeout are the http.Server
	// timeouts of cmd/jobserver (JSON "read_timeout", "write_timeout",
	// "idle_timeout", in milliseconds; zero means none). The handler itself
	// only reads the serving http.Server's WriteTimeout, to lengthen the
	// write deadline of the routes that hold a request (see routes.go).
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// Workers bounds how many models run at once, for the synchronous and
	// asynchronous paths together (JSON "workers"; default GOMAXPROCS).
	Workers int
	// MaxBodyBytes bounds a request body; a larger one is answered 413
	// (JSON "max_body_bytes"; default DefaultMaxBodyBytes, range 1 to
	// 2^27, 128 MiB, so that a durable store can hold any body).
	MaxBodyBytes int64
	// MaxReplyBytesInFlight bounds the bytes that the replies carrying a
	// stored result (GET /jobs/{id}/result, and POST /jobs under Prefer:
	// wait) hold at once, from the read of the result until the reply is
	// written; a reply that does not fit is answered 503 (JSON
	// "max_reply_bytes_in_flight"; default DefaultMaxReplyBytes, range 1
	// to 2^40). See replies.go.
	MaxReplyBytesInFlight int64
	// MaxPixels bounds the width times height of an image the fingerprint
	// model decodes; a larger one is refused with 422 before decoding, from
	// its header (JSON "max_pixels"; default DefaultMaxPixels, range 1 to
	// 2^30). Models of your own (Options.Model) do not see it.
	MaxPixels int
	// MaxWait is the default and the ceiling of the timeout of
	// GET /jobs/{id}/wait, and the ceiling, in whole seconds, of
	// Prefer: wait on POST /jobs (JSON "max_wait", in milliseconds). Zero
	// makes every wait return at once.
	MaxWait time.Duration
	// Model names the built-in model to run: "fingerprint" or "echo" (JSON
	// "model"). Options.Model replaces it with a model of your own.
	Model string
	// AsyncEnabled turns the /jobs routes on; when false they answer 503
	// (JSON "async_enabled").
	AsyncEnabled bool
	// AsyncTimeout is every job's deadline from admission, for both paths
	// (JSON "async_timeout", in milliseconds).
	AsyncTimeout time.Duration
	// AsyncMaxQueue bounds the jobs that are PENDING or RUNNING; zero or
	// negative admits nothing (JSON "async_max_queue").
	AsyncMaxQueue int
	// AsyncJobTTL is how long a finished job is retained (JSON
	// "async_job_ttl", in milliseconds).
	AsyncJobTTL time.Duration
	// AsyncMaxCompleted bounds the finished jobs retained (JSON
	// "async_max_completed").
	AsyncMaxCompleted int
	// Store names the store that keeps the jobs (JSON "store"): "memory",
	// the default, whose jobs are lost when the process ends. New opens it
	// unless Options.Ledger gives a store (store.go).
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
}

// DefaultConfig returns the configuration that `go run ./cmd/jobserver`
// uses with no config file and no flags.
func DefaultConfig() Config {
	return Config{
		Listen:                DefaultListen,
		ReadTimeout:           DefaultReadTimeout,
		WriteTimeout:          DefaultWriteTimeout,
		IdleTimeout:           DefaultIdleTimeout,
		Workers:               runtime.GOMAXPROCS(0),
		MaxBodyBytes:          DefaultMaxBodyBytes,
		MaxReplyBytesInFlight: DefaultMaxReplyBytes,
		MaxPixels:             DefaultMaxPixels,
		MaxWait:               DefaultMaxWait,
		Model:                 DefaultModel,
		AsyncEnabled:          true,
		AsyncTimeout:          DefaultAsyncTimeout,
		AsyncMaxQueue:         DefaultAsyncMaxQueue,
		AsyncJobTTL:           DefaultAsyncJobTTL,
		AsyncMaxCompleted:     DefaultAsyncMaxCompleted,
		Store:                 DefaultStore,
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
}

// ParseConfig reads a JSON config object: the keys of docs/http.md, each
// optional, over DefaultConfig. It refuses unknown keys, values of the wrong
// type and values out of range, wrapping ErrInvalidConfig with a message that
// names the key. It never panics, whatever data holds.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return cfg, fmt.Errorf("%w: want a JSON object", ErrInvalidConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var f fileConfig
	if err := dec.Decode(&f); err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%w: data after the JSON object", ErrInvalidConfig)
	}
	if err := f.apply(&cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// ReadConfig is ParseConfig on everything r holds.
func ReadConfig(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return DefaultConfig(), fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return ParseConfig(data)
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
		return 0, fmt.Errorf("%w: %s: %d is not a number of milliseconds in [0, %d]", ErrInvalidConfig, key, ms, maxMillis)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Validate reports the first value of c that is out of range, wrapping
// ErrInvalidConfig with a message naming its JSON key.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidConfig, key}, args...)...)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return bad("listen", "%q is not host:port", c.Listen)
	}
	switch {
	case c.Workers < 1 || c.Workers > 1<<16:
		return bad("workers", "%d is not in [1, 65536]", c.Workers)
	case c.MaxBodyBytes < 1 || c.MaxBodyBytes > maxMaxBodyBytes:
		return bad("max_body_bytes", "%d is not in [1, %d]", c.MaxBodyBytes, maxMaxBodyBytes)
	case c.MaxReplyBytesInFlight < 1 || c.MaxReplyBytesInFlight > maxMaxReplyBytes:
		return bad("max_reply_bytes_in_flight", "%d is not in [1, %d]", c.MaxReplyBytesInFlight, int64(maxMaxReplyBytes))
	case c.MaxPixels < 1 || c.MaxPixels > maxMaxPixels:
		return bad("max_pixels", "%d is not in [1, %d]", c.MaxPixels, maxMaxPixels)
	case c.MaxWait < 0:
		return bad("max_wait", "%v is negative", c.MaxWait)
	case c.ReadTimeout < 0:
		return bad("read_timeout", "%v is negative", c.ReadTimeout)
	case c.WriteTimeout < 0:
		return bad("write_timeout", "%v is negative", c.WriteTimeout)
	case c.IdleTimeout < 0:
		return bad("idle_timeout", "%v is negative", c.IdleTimeout)
	case c.AsyncTimeout < time.Millisecond:
		return bad("async_timeout", "%v is under 1 ms", c.AsyncTimeout)
	case c.AsyncMaxQueue > math.MaxInt32:
		return bad("async_max_queue", "%d exceeds %d", c.AsyncMaxQueue, math.MaxInt32)
	case c.AsyncJobTTL < time.Millisecond:
		return bad("async_job_ttl", "%v is under 1 ms", c.AsyncJobTTL)
	case c.AsyncMaxCompleted < 1:
		return bad("async_max_completed", "%d is not positive", c.AsyncMaxCompleted)
	case c.Lease < 0:
		return bad("lease", "%v is negative", c.Lease)
	}
	if _, ok := builtinModels[c.Model]; !ok {
		return bad("model", "%q is not one of %s", c.Model, modelNames())
	}
	if _, _, err := parseStore(c.Store); err != nil {
		return bad("store", "%v", err)
	}
	return nil
}
