package jobapi

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/model"
)

// Defaults that DefaultConfig fills in. The JSON keys, their units and
// their defaults are listed in docs/http.md.
const (
	DefaultMaxBodyBytes      = 8 << 20
	DefaultMaxReplyBytes     = 64 << 20
	DefaultMaxPixels         = model.DefaultMaxPixels
	DefaultMaxWait           = 30 * time.Second
	DefaultModel             = "fingerprint"
	DefaultAsyncTimeout      = 30 * time.Second
	DefaultAsyncMaxQueue     = 16
	DefaultAsyncJobTTL       = 10 * time.Minute
	DefaultAsyncMaxCompleted = 1024
)

// MaxBodyBytesCeiling is the ceiling of max_body_bytes: 128 MiB. A job's
// stored request is its body re-encoded, no longer than the body but for
// the escapes of its task id, so a store that takes a write of twice the
// ceiling stores any body within it (cmd/jobserver checks its stores).
const MaxBodyBytesCeiling = 1 << 27

// maxMaxReplyBytes is the ceiling of max_reply_bytes_in_flight: 1 TiB,
// far beyond any machine's memory, so that only nonsense is refused.
const maxMaxReplyBytes = 1 << 40

// maxMaxPixels is the ceiling of max_pixels: 2^30 pixels are 4 GiB as
// RGBA, more than one decode should ever take.
const maxMaxPixels = 1 << 30

// Config is the handler's configuration. Start from DefaultConfig and
// change what differs: the zero value is not valid, and New refuses it.
// The serving http.Server's timeouts are its own; the handler reads its
// WriteTimeout to lengthen the write deadline of the routes that hold a
// request (routes.go).
type Config struct {
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
	// AsyncMaxQueue, AsyncJobTTL and AsyncMaxCompleted are the ledger's
	// limits (LedgerConfig). The handler reads AsyncMaxQueue, to bound the
	// bodies of POST /jobs in flight, so open the ledger with them.
	//
	// AsyncMaxQueue bounds the jobs that are PENDING or RUNNING; zero or
	// negative admits nothing (JSON "async_max_queue").
	AsyncMaxQueue int
	// AsyncJobTTL is how long a finished job is retained (JSON
	// "async_job_ttl", in milliseconds).
	AsyncJobTTL time.Duration
	// AsyncMaxCompleted bounds the finished jobs retained (JSON
	// "async_max_completed").
	AsyncMaxCompleted int
	// TenantMaxQueue bounds each tenant's jobs that are PENDING or
	// RUNNING, beside AsyncMaxQueue; a tenant's max_queue in the token file
	// overrides it. Zero means no bound beyond AsyncMaxQueue (JSON
	// "tenant_max_queue").
	TenantMaxQueue int
}

// DefaultConfig returns the configuration that `go run ./cmd/jobserver`
// uses with no config file and no flags.
func DefaultConfig() Config {
	return Config{
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
	}
}

// LedgerConfig is the ledger's configuration of c's limits: the queue
// bound and the retention of finished jobs.
func (c Config) LedgerConfig() ledger.Config {
	return ledger.Config{MaxQueue: c.AsyncMaxQueue, JobTTL: c.AsyncJobTTL, MaxCompleted: c.AsyncMaxCompleted}
}

// Validate reports the first value of c that is out of range, wrapping
// ErrInvalidConfig with a message naming its JSON key.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidConfig, key}, args...)...)
	}
	switch {
	case c.Workers < 1 || c.Workers > 1<<16:
		return bad("workers", "%d is not in [1, 65536]", c.Workers)
	case c.MaxBodyBytes < 1 || c.MaxBodyBytes > MaxBodyBytesCeiling:
		return bad("max_body_bytes", "%d is not in [1, %d]", c.MaxBodyBytes, MaxBodyBytesCeiling)
	case c.MaxReplyBytesInFlight < 1 || c.MaxReplyBytesInFlight > maxMaxReplyBytes:
		return bad("max_reply_bytes_in_flight", "%d is not in [1, %d]", c.MaxReplyBytesInFlight, int64(maxMaxReplyBytes))
	case c.MaxPixels < 1 || c.MaxPixels > maxMaxPixels:
		return bad("max_pixels", "%d is not in [1, %d]", c.MaxPixels, maxMaxPixels)
	case c.MaxWait < 0:
		return bad("max_wait", "%v is negative", c.MaxWait)
	case c.AsyncTimeout < time.Millisecond:
		return bad("async_timeout", "%v is under 1 ms", c.AsyncTimeout)
	case c.AsyncMaxQueue > math.MaxInt32:
		return bad("async_max_queue", "%d exceeds %d", c.AsyncMaxQueue, math.MaxInt32)
	case c.AsyncJobTTL < time.Millisecond:
		return bad("async_job_ttl", "%v is under 1 ms", c.AsyncJobTTL)
	case c.TenantMaxQueue < 0 || c.TenantMaxQueue > math.MaxInt32:
		return bad("tenant_max_queue", "%d is not in [0, %d]", c.TenantMaxQueue, math.MaxInt32)
	case c.AsyncMaxCompleted < 1:
		return bad("async_max_completed", "%d is not positive", c.AsyncMaxCompleted)
	}
	if _, ok := builtinModels[c.Model]; !ok {
		return bad("model", "%q is not one of %s", c.Model, modelNames())
	}
	return nil
}
