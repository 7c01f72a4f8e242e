package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/jobapi/auth"
)

// loadSecurity reads what cfg names of the token file and the TLS
// certificate, before anything is bound or opened: keys is nil without a
// token file, tc nil without TLS. It refuses an address beyond loopback
// without a token file unless insecure.
func loadSecurity(cfg config.Config, insecure bool) (keys *auth.Keys, tc *tls.Config, err error) {
	if err := refuseExposed(cfg.Listen, exposedHost(cfg.Listen), cfg.TokensFile != "", insecure); err != nil {
		return nil, nil, err
	}
	if cfg.TokensFile != "" {
		if keys, err = auth.ReadFile(cfg.TokensFile); err != nil {
			return nil, nil, err
		}
	}
	if tc, err = loadTLS(cfg.TLSCert, cfg.TLSKey); err != nil {
		return nil, nil, err
	}
	return keys, tc, nil
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

// loadTLS reads the certificate chain and key that cert and key name, for
// a server that speaks TLS 1.2 at least. Both empty: nil, plain HTTP.
func loadTLS(cert, key string) (*tls.Config, error) {
	if cert == "" && key == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("tls_cert %q, tls_key %q: %w", cert, key, err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}, nil
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

// watchTokens reloads the token file into mw on each value hup delivers,
// until stop is closed.
func watchTokens(hup <-chan os.Signal, stop <-chan struct{}, path string, mw *auth.Middleware, log *slog.Logger) {
	for {
		select {
		case <-stop:
			return
		case <-hup:
			reloadTokens(path, mw, log)
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
