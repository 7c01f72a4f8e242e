package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, Default(), cfg)
	require.True(t, cfg.AsyncEnabled)
	require.Equal(t, 16, cfg.AsyncMaxQueue)
	require.Equal(t, "127.0.0.1:8080", cfg.Listen)
	require.Equal(t, "fingerprint", cfg.Model)
}

func TestParseConfigKeys(t *testing.T) {
	cfg, err := Parse([]byte(`{
		"async_enabled": false, "async_timeout": 1500, "async_max_queue": -1,
		"async_job_ttl": 60000, "async_max_completed": 7, "listen": "127.0.0.1:0",
		"workers": 3, "max_body_bytes": 1024, "max_reply_bytes_in_flight": 4096, "max_pixels": 4096, "max_wait": 0, "model": "echo",
		"read_timeout": 2000, "write_timeout": 0, "idle_timeout": 4000, "store": "memory",
		"replica": "r1", "lease": 2500, "tokens_file": "tokens.txt", "tls_cert": "c.pem", "tls_key": "k.pem"}`))
	require.NoError(t, err)
	want := Config{
		Config: jobapi.Config{
			Workers: 3, MaxBodyBytes: 1024, MaxReplyBytesInFlight: 4096, MaxPixels: 4096, MaxWait: 0, Model: "echo",
			AsyncEnabled: false, AsyncTimeout: 1500 * time.Millisecond, AsyncMaxQueue: -1,
			AsyncJobTTL: time.Minute, AsyncMaxCompleted: 7,
		},
		Listen:      "127.0.0.1:0",
		ReadTimeout: 2 * time.Second, WriteTimeout: 0, IdleTimeout: 4 * time.Second,
		Store: "memory", Replica: "r1", Lease: 2500 * time.Millisecond,
		TokensFile: "tokens.txt", TLSCert: "c.pem", TLSKey: "k.pem",
	}
	require.Equal(t, want, cfg)
}

func TestParseConfigRefuses(t *testing.T) {
	for _, c := range []struct{ name, data, mention string }{
		{"empty", ``, "JSON object"},
		{"array", `[]`, "JSON object"},
		{"unknown key", `{"async_timeot": 5}`, "async_timeot"},
		{"wrong type", `{"workers": "2"}`, "workers"},
		{"fraction", `{"async_timeout": 1.5}`, "async_timeout"},
		{"negative ms", `{"max_wait": -1}`, "max_wait"},
		{"negative idle", `{"idle_timeout": -1}`, "idle_timeout"},
		{"huge ms", `{"async_job_ttl": 9223372036854775807}`, "async_job_ttl"},
		{"zero timeout", `{"async_timeout": 0}`, "async_timeout"},
		{"zero workers", `{"workers": 0}`, "workers"},
		{"zero body", `{"max_body_bytes": 0}`, "max_body_bytes"},
		{"body over 2^27", `{"max_body_bytes": 134217729}`, "max_body_bytes"},
		{"zero reply budget", `{"max_reply_bytes_in_flight": 0}`, "max_reply_bytes_in_flight"},
		{"reply budget over 2^40", `{"max_reply_bytes_in_flight": 1099511627777}`, "max_reply_bytes_in_flight"},
		{"zero pixels", `{"max_pixels": 0}`, "max_pixels"},
		{"pixels over 2^30", `{"max_pixels": 1073741825}`, "max_pixels"},
		{"zero completed", `{"async_max_completed": 0}`, "async_max_completed"},
		{"queue over int32", `{"async_max_queue": 4294967296}`, "async_max_queue"},
		{"bad listen", `{"listen": "nowhere"}`, "listen"},
		{"bad model", `{"model": "gpt"}`, "model"},
		{"unknown store", `{"store": "redis:6379"}`, `store: "redis:6379" is not one of the accepted forms: memory`},
		{"empty store", `{"store": ""}`, `store: "" is not one of the accepted forms: memory`},
		{"memory with a path", `{"store": "memory:jobs.db"}`, `store: "memory:jobs.db": memory takes no path`},
		{"postgres not a URL", `{"store": "postgres:db"}`, `store: "postgres:db" is not a URL: the form is postgres://...`},
		{"store not a string", `{"store": 1}`, "store"},
		{"negative lease", `{"lease": -1}`, "lease"},
		{"replica not a string", `{"replica": 1}`, "replica"},
		{"certificate without key", `{"tls_cert": "c.pem"}`, `tls_key: missing: tls_cert "c.pem" needs its key`},
		{"key without certificate", `{"tls_key": "k.pem"}`, `tls_cert: missing: tls_key "k.pem" needs its certificate`},
		{"tokens_file not a string", `{"tokens_file": true}`, "tokens_file"},
		{"trailing", `{} {}`, "after the JSON object"},
		{"not JSON", `{"workers":`, "invalid config"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.data))
			require.ErrorIs(t, err, jobapi.ErrInvalidConfig)
			require.Contains(t, err.Error(), c.mention)
		})
	}
}

func TestReadConfig(t *testing.T) {
	cfg, err := Read(strings.NewReader(`{"workers": 2}`))
	require.NoError(t, err)
	require.Equal(t, 2, cfg.Workers)
}
