package config

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// FuzzParseConfig feeds arbitrary bytes to parseConfig. It must not
// panic; it must refuse with an error that wraps jobapi.ErrInvalidConfig
// and says more than the sentinel, or accept a configuration whose every
// value is in range, that Validate accepts and that starts a server.
// Parsing twice gives the same answer.
func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		again, err2 := Parse(data)
		if cfg != again || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse(%q) is not deterministic: %+v, %v then %+v, %v", data, cfg, err, again, err2)
		}
		if err != nil {
			if !errors.Is(err, jobapi.ErrInvalidConfig) {
				t.Fatalf("Parse(%q) = %v, which does not wrap ErrInvalidConfig", data, err)
			}
			if msg := strings.TrimPrefix(err.Error(), jobapi.ErrInvalidConfig.Error()); strings.Trim(msg, ": ") == "" {
				t.Fatalf("Parse(%q) = %q, which does not say what is wrong", data, err)
			}
			return
		}
		if err := configInRange(cfg); err != nil {
			t.Fatalf("Parse(%q) accepted %+v: %v", data, cfg, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted %+v, which Validate refuses: %v", data, cfg, err)
		}
		// A durable store would be opened: a file created where the input
		// says, a connection to the host it names. Its form was checked
		// above; the handler's configuration starts a server on the
		// memory store.
		st, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
		if err != nil {
			t.Fatalf("Parse(%q) accepted %+v, whose ledger configuration is refused: %v", data, cfg, err)
		}
		defer st.Close()
		srv, err := jobapi.New(st, cfg.Config, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
		if err != nil {
			t.Fatalf("Parse(%q) accepted %+v, which the handler refuses: %v", data, cfg, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = srv.Shutdown(ctx) // no jobs ran: nothing to wait for
		if err := srv.CheckInvariants(); err != nil {
			t.Errorf("once drained, the server's invariants: %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
}

// configInRange checks the ranges of docs/http.md, written out again.
func configInRange(c Config) error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return errors.New("listen is not host:port")
	}
	switch {
	case c.Workers < 1 || c.Workers > 65536:
		return errors.New("workers out of [1, 65536]")
	case c.MaxBodyBytes < 1 || c.MaxBodyBytes > 1<<27:
		return errors.New("max_body_bytes out of [1, 2^27]")
	case c.MaxReplyBytesInFlight < 1 || c.MaxReplyBytesInFlight > 1<<40:
		return errors.New("max_reply_bytes_in_flight out of [1, 2^40]")
	case c.MaxPixels < 1 || c.MaxPixels > 1<<30:
		return errors.New("max_pixels out of [1, 2^30]")
	case c.MaxWait < 0:
		return errors.New("max_wait negative")
	case c.AsyncTimeout < time.Millisecond:
		return errors.New("async_timeout under 1 ms")
	case c.AsyncJobTTL < time.Millisecond:
		return errors.New("async_job_ttl under 1 ms")
	case c.AsyncMaxCompleted < 1:
		return errors.New("async_max_completed not positive")
	case c.AsyncMaxQueue > math.MaxInt32:
		return errors.New("async_max_queue above MaxInt32")
	case c.Model != "fingerprint" && c.Model != "echo":
		return errors.New("model unknown")
	case c.Lease < 0:
		return errors.New("lease negative")
	case !storeForm(c.Store):
		return errors.New("store not memory, sqlite:PATH or a postgres URL")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("tls_cert without tls_key, or the reverse")
	}
	return nil
}

// storeForm reports whether v is one of the store forms of docs/http.md:
// memory, sqlite:PATH, postgres://... or postgresql://...
func storeForm(v string) bool {
	path, sqlite := strings.CutPrefix(v, "sqlite:")
	return v == "memory" || (sqlite && path != "") ||
		strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://")
}

// Seeds: one per key, valid and out of range, and malformed files.
var configSeeds = []string{
	`{}`,
	` { } `,
	`{"listen":"127.0.0.1:0","workers":2,"max_body_bytes":1024,"max_wait":0,"model":"echo",` +
		`"async_enabled":false,"async_timeout":1,"async_max_queue":0,"async_job_ttl":1,"async_max_completed":1}`,
	`{"listen":"nohost"}`,
	`{"listen":"[::1]:8080"}`,
	`{"workers":0}`,
	`{"workers":65537}`,
	`{"workers":1.5}`,
	`{"max_body_bytes":0}`,
	`{"max_body_bytes":-1}`,
	`{"max_body_bytes":134217729}`,
	`{"max_reply_bytes_in_flight":1}`,
	`{"max_reply_bytes_in_flight":0}`,
	`{"max_reply_bytes_in_flight":1099511627776}`,
	`{"max_reply_bytes_in_flight":1099511627777}`,
	`{"max_pixels":1}`,
	`{"max_pixels":0}`,
	`{"max_pixels":1073741824}`,
	`{"max_pixels":1073741825}`,
	`{"max_wait":-1}`,
	`{"max_wait":9223372036854}`,
	`{"max_wait":9223372036855}`,
	`{"model":"gpt"}`,
	`{"model":null}`,
	`{"store":"memory"}`,
	`{"store":"memory:x"}`,
	`{"store":"sqlite:"}`,
	`{"store":":"}`,
	`{"store":"sqlite:0"}`,
	`{"store":"postgres://127.0.0.1:1/db"}`,
	`{"store":"postgres:x"}`,
	`{"async_enabled":"yes"}`,
	`{"async_timeout":0}`,
	`{"async_timeout":1e3}`,
	`{"async_max_queue":-5}`,
	`{"async_max_queue":2147483648}`,
	`{"async_max_queue":9223372036854775808}`,
	`{"async_job_ttl":0}`,
	`{"async_max_completed":0}`,
	`{"unknown":1}`,
	`{"workers":1,"workers":2}`,
	`{"workers":1}{"workers":2}`,
	`{"workers":1} trailing`,
	`[]`,
	`null`,
	``,
	`{`,
	"\xef\xbb\xbf{}",
	`{"listen":"\u0000:1"}`,
	`{"replica":"r1","lease":500}`,
	`{"lease":-1}`,
	`{"workers": 2, "model": "echo"}`,
	`{"async_timeout": -1}`,
	`{"max_wait": 1e30}`,
	`{"tokens_file":"tokens.txt"}`,
	`{"tokens_file":""}`,
	`{"tokens_file":5}`,
	`{"tls_cert":"cert.pem","tls_key":"key.pem"}`,
	`{"tls_cert":"cert.pem"}`,
	`{"tls_key":"key.pem"}`,
	`{"tls_cert":"","tls_key":""}`,
	`{"tls_cert":"c","tls_key":"k","tokens_file":"t","listen":"0.0.0.0:8443"}`,
}
