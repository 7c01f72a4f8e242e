package main

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/jobapi/auth"
)

// security is what the server checks and presents: the token file's keys
// (nil without one) and its certificate (nil without TLS).
type security struct {
	keys *auth.Keys
	cert *certificate
}

// loadSecurity reads the token file and the certificate that cfg names,
// before anything is bound or opened. It refuses an address beyond
// loopback without a token file unless insecure.
func loadSecurity(cfg config.Config, insecure bool) (sec security, err error) {
	if err := refuseExposed(cfg.Listen, exposedHost(cfg.Listen), cfg.TokensFile != "", insecure); err != nil {
		return sec, err
	}
	if cfg.TokensFile != "" {
		if sec.keys, err = auth.ReadFile(cfg.TokensFile); err != nil {
			return sec, err
		}
	}
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		if sec.cert, err = loadCertificate(cfg.TLSCert, cfg.TLSKey); err != nil {
			return sec, err
		}
	}
	return sec, nil
}

// exposedHost reports whether listening on listen (host:port) may reach
// beyond this machine: any host but a loopback IP or "localhost", the
// empty host (every interface) included. A name other than localhost
// counts as exposed rather than be resolved here.
func exposedHost(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip, _, _ := strings.Cut(host, "%") // an IPv6 zone
	parsed := net.ParseIP(ip)
	return parsed == nil || !parsed.IsLoopback()
}

// refuseExposed refuses to serve without tokens on an address beyond
// this machine, unless insecure says to.
func refuseExposed(addr string, exposed, tokens, insecure bool) error {
	if !exposed || tokens || insecure {
		return nil
	}
	return fmt.Errorf("listen %q is not a loopback address and no tokens_file is given: anyone who reaches it "+
		"could submit, read and cancel every job; give -tokens-file, or start with -insecure to serve it without tokens", addr)
}

// boundExposed reports whether the address a listener bound is not a
// loopback one ("localhost" may resolve to anything).
func boundExposed(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}

// certificate is the certificate chain and key the server presents, read
// from two files and swapped whole when they are read again.
type certificate struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// loadCertificate reads the PEM files certFile and keyFile.
func loadCertificate(certFile, keyFile string) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads the files again; on an error the certificate in use stays.
func (c *certificate) load() error {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls_cert %q, tls_key %q: %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&pair)
	return nil
}

// fingerprint is the SHA-256 of the certificate in use, in hex, as
// "openssl x509 -fingerprint -sha256" prints it without colons.
func (c *certificate) fingerprint() string {
	sum := sha256.Sum256(c.cur.Load().Certificate[0])
	return hex.EncodeToString(sum[:])
}

// tlsConfig is the TLS configuration of a server presenting c: TLS 1.2
// at least, and the certificate last loaded at each handshake.
func (c *certificate) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}
}

// serveHTTPS sets httpSrv up to speak HTTP/1.1 over TLS with tc. The API's
// framing and deadlines (a closed connection after a chunked body, write
// deadlines moved per request) are written for HTTP/1.1, so HTTP/2 is not
// offered.
func serveHTTPS(httpSrv *http.Server, tc *tls.Config) {
	var p http.Protocols
	p.SetHTTP1(true)
	httpSrv.Protocols = &p
	httpSrv.TLSConfig = tc
}

// reloadTokens reads the token file at path into mw. A file that cannot be
// read or parsed is logged and leaves mw's key set as it was.
func reloadTokens(path string, mw *auth.Middleware, log *slog.Logger) bool {
	keys, err := auth.ReadFile(path)
	if err != nil {
		log.Error("tokens not reloaded: the earlier set stays in force", "error", err)
		return false
	}
	mw.SetKeys(keys)
	log.Info("tokens reloaded", "tokens", keys.Len())
	return true
}

// reloadCertificate reads c's files again. A pair that cannot be read is
// logged and leaves the certificate in use as it was.
func reloadCertificate(c *certificate, log *slog.Logger) bool {
	if err := c.load(); err != nil {
		log.Error("certificate not reloaded: the earlier one stays in use", "error", err)
		return false
	}
	log.Info("certificate reloaded", "sha256", c.fingerprint())
	return true
}

// watchHangup calls reload on each value hup delivers, until stop is
// closed.
func watchHangup(hup <-chan os.Signal, stop <-chan struct{}, reload func()) {
	for {
		select {
		case <-stop:
			return
		case <-hup:
			reload()
		}
	}
}

// printNewToken writes a new token for tenant and role, then the line of
// the token file that admits it.
func printNewToken(out io.Writer, tenant, role string) error {
	r, err := auth.ParseRole(role)
	if err != nil {
		return fmt.Errorf("-role: %w", err)
	}
	token, line, err := auth.NewToken(tenant, r)
	if err != nil {
		return fmt.Errorf("-new-token: %w", err)
	}
	_, err = fmt.Fprintf(out, "%s\n%s\n", token, line)
	return err
}
