package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi/auth"
)

func TestExposedHost(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:8080":   false,
		"127.0.0.2:1":      false,
		"[::1]:0":          false,
		"[::1%lo]:0":       false,
		"localhost:8080":   false,
		"LocalHost:8080":   false,
		":8080":            true,
		"0.0.0.0:8080":     true,
		"[::]:8080":        true,
		"10.0.0.1:8080":    true,
		"[fe80::1%eth0]:1": true,
		"example.com:80":   true,
		"localhost.evil:1": true,
		"nohostport":       true,
	} {
		require.Equal(t, want, exposedHost(listen), listen)
	}
}

// TestRefusesExposedWithoutTokens: without a token file the server will
// not listen beyond loopback, and says which flag would let it; a token
// file or -insecure lets the start go on (here to the next thing that
// stops it, before any port is bound).
func TestRefusesExposedWithoutTokens(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	err := run([]string{"-listen", "0.0.0.0:0"}, log)
	require.ErrorContains(t, err, `listen "0.0.0.0:0" is not a loopback address and no tokens_file is given`)
	require.ErrorContains(t, err, "-insecure")
	require.ErrorContains(t, run([]string{"-listen", ":0"}, log), `listen ":0" is not a loopback address`)

	missing := filepath.Join(t.TempDir(), "none")
	err = run([]string{"-listen", "0.0.0.0:0", "-tokens-file", missing}, log)
	require.ErrorIs(t, err, os.ErrNotExist, "with a token file the address is let through; the file is read first")
	err = run([]string{"-listen", "0.0.0.0:0", "-insecure", "-tls-cert", missing, "-tls-key", missing}, log)
	require.ErrorContains(t, err, "tls_cert", "-insecure lets the address through; the certificate is read next")

	require.NoError(t, refuseExposed("127.0.0.1:1", false, false, false))
	require.NoError(t, refuseExposed("0.0.0.0:1", true, false, true))
	require.NoError(t, refuseExposed("0.0.0.0:1", true, true, false))
	require.True(t, boundExposed(&net.TCPAddr{IP: net.IPv4zero}))
	require.False(t, boundExposed(&net.TCPAddr{IP: net.IPv6loopback}))
}

func TestNewTokenFlags(t *testing.T) {
	opts, err := parseFlags([]string{"-new-token", "acme", "-role", "admin"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "acme", opts.newToken)
	require.Equal(t, "admin", opts.role)
	opts, err = parseFlags([]string{"-new-token", "acme"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "submit", opts.role)
	_, err = parseFlags([]string{"-role", "admin"}, io.Discard)
	require.ErrorContains(t, err, "-role is given only with -new-token")

	var out bytes.Buffer
	require.NoError(t, printNewToken(&out, "acme", "metrics"))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	k, err := auth.Parse(strings.NewReader(lines[1]))
	require.NoError(t, err)
	id, ok := k.Lookup(lines[0])
	require.True(t, ok)
	require.Equal(t, auth.Identity{Tenant: "acme", Role: auth.RoleMetrics}, id)
	require.ErrorContains(t, printNewToken(io.Discard, "acme", "root"), "-role")
	require.ErrorContains(t, printNewToken(io.Discard, "a/b", "submit"), "-new-token")
}

// TestReloadOnHangup drives reloadTokens as the SIGHUP handler does: a
// token removed from the file is refused from the reload on, and a file
// that does not parse leaves the earlier set in force, naming the line.
func TestReloadOnHangup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	// Each version of the file is written whole, then renamed over the
	// last, as an operator should: the reload that the second SIGHUP of
	// reload may leave running reads one version or the other.
	write := func(lines ...string) {
		tmp := path + ".new"
		require.NoError(t, os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
		require.NoError(t, os.Rename(tmp, path))
	}
	tokenA, lineA := newTokenLine(t, "acme")
	tokenB, lineB := newTokenLine(t, "beta")
	write("# two tenants", lineA, lineB)
	keys, err := auth.ReadFile(path)
	require.NoError(t, err)
	mw := auth.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), keys)
	status := func(token string) int {
		r := httptest.NewRequest("POST", "/jobs", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		mw.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusOK, status(tokenA))

	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	hup, stop, done := make(chan os.Signal), make(chan struct{}), make(chan struct{})
	go func() { defer close(done); watchHangup(hup, stop, func() { reloadTokens(path, mw, log) }) }()
	reload := func() {
		hup <- syscall.SIGHUP
		hup <- syscall.SIGHUP // taken once the first reload is over
	}
	t.Cleanup(func() { close(stop); <-done }) // before TempDir's removal

	write(lineB)
	reload()
	require.Equal(t, http.StatusUnauthorized, status(tokenA), "a removed token stops working at once")
	require.Equal(t, http.StatusOK, status(tokenB))

	write(lineA, "not a line")
	reload()
	require.Equal(t, http.StatusOK, status(tokenB), "a malformed file keeps the earlier set")
	require.Equal(t, http.StatusUnauthorized, status(tokenA))
	require.Contains(t, logBuf.String(), "line 2")
	require.Contains(t, logBuf.String(), "tokens not reloaded")

	require.NoError(t, os.Remove(path))
	require.False(t, reloadTokens(path, mw, log))
	require.Equal(t, http.StatusOK, status(tokenB), "a missing file keeps the earlier set")
}

// newTokenLine makes a token of role submit for tenant and its line.
func newTokenLine(t *testing.T, tenant string) (token, line string) {
	t.Helper()
	token, line, err := auth.NewToken(tenant, auth.RoleSubmit)
	require.NoError(t, err)
	return token, line
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir,
// returning their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "jobserver test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

// logLines runs cmd and delivers each line of its stderr on the channel
// it returns, closed when the process closes its stderr.
func logLines(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// nextMsg returns the first line of lines whose msg begins with msg,
// failing the test if the log ends or none comes within 30 seconds.
func nextMsg(t *testing.T, lines <-chan string, msg string) map[string]any {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the log ended before %q", msg)
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && strings.HasPrefix(fmt.Sprint(m["msg"]), msg) {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q in the log", msg)
		}
	}
}

// TestTokensOverTLS runs the binary with a token file that -new-token
// wrote and a self-signed certificate: HTTPS at TLS 1.2 or later only,
// 401, 403 and the job API by token, a SIGHUP that takes a token away,
// and one that puts a new certificate in place.
func TestTokensOverTLS(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	dir := t.TempDir()
	newToken := func(args ...string) (token, line string) {
		out, err := exec.Command(filepath.Join(bin, "jobserver"), append([]string{"-new-token"}, args...)...).Output()
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 2)
		return lines[0], lines[1]
	}
	sub, subLine := newToken("acme")
	adm, admLine := newToken("ops", "-role", "admin")
	tokens := filepath.Join(dir, "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte(subLine+"\n"+admLine+"\n"), 0o600))
	certPath, keyPath, pool := selfSigned(t, dir)

	cmd := exec.Command(filepath.Join(bin, "jobserver"), "-listen", "127.0.0.1:0", "-model", "echo", "-grace", "0s",
		"-tokens-file", tokens, "-tls-cert", certPath, "-tls-key", keyPath)
	lines := logLines(t, cmd)
	listening := nextMsg(t, lines, "listening")
	require.Equal(t, true, listening["tls"])
	require.EqualValues(t, 2, listening["tokens"])
	base := "https://" + listening["addr"].(string)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	do := func(method, path, token string) *http.Response {
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	health := do("GET", "/healthz", "")
	require.Equal(t, http.StatusOK, health.StatusCode)
	require.GreaterOrEqual(t, health.TLS.Version, uint16(tls.VersionTLS12))
	require.Equal(t, "HTTP/1.1", health.Proto)
	refused := do("POST", "/jobs", "")
	require.Equal(t, http.StatusUnauthorized, refused.StatusCode)
	require.Equal(t, `Bearer realm="jobledger"`, refused.Header.Get("WWW-Authenticate"))
	require.Equal(t, http.StatusAccepted, do("POST", "/jobs", sub).StatusCode)
	require.Equal(t, http.StatusOK, do("GET", "/jobs", sub).StatusCode, "a submit token lists its tenant's jobs")
	require.Equal(t, http.StatusOK, do("GET", "/jobs", adm).StatusCode)

	// The console reads through the same check: it answers no one without
	// a token, and a submit token's page of jobs lists its tenant's alone.
	require.Equal(t, http.StatusUnauthorized, do("GET", "/console", "").StatusCode)
	id := path.Base(do("POST", "/jobs", adm).Header.Get("Location"))
	require.NotEmpty(t, id)
	own := path.Base(do("POST", "/jobs", sub).Header.Get("Location"))
	require.NotEmpty(t, own)
	consoleJobs := func(token string) string {
		req, err := http.NewRequest("GET", base+"/console/jobs", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body)
	}
	require.NotContains(t, consoleJobs(sub), id, "a submit token lists no other tenant's job through the console")
	require.Contains(t, consoleJobs(sub), own)
	require.Contains(t, consoleJobs(adm), id)
	require.Contains(t, consoleJobs(adm), own)

	old := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}
	defer old.CloseIdleConnections()
	_, err := (&http.Client{Transport: old, Timeout: 30 * time.Second}).Get(base + "/healthz")
	require.Error(t, err, "TLS 1.1 is refused")
	handshake := nextMsg(t, lines, "http: TLS handshake error from 127.0.0.1:")
	require.Equal(t, "WARN", handshake["level"])

	require.NoError(t, os.WriteFile(tokens, []byte(admLine+"\n"), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	reloaded := nextMsg(t, lines, "tokens reloaded")
	require.EqualValues(t, 1, reloaded["tokens"])
	require.Equal(t, http.StatusUnauthorized, do("POST", "/jobs", sub).StatusCode, "a removed token stops working")
	require.Equal(t, http.StatusAccepted, do("POST", "/jobs", adm).StatusCode)

	require.NoError(t, os.WriteFile(tokens, []byte("garbage\n"), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	nextMsg(t, lines, "tokens not reloaded: the earlier set stays in force")
	require.Equal(t, http.StatusAccepted, do("POST", "/jobs", adm).StatusCode)

	// A new certificate, written whole and renamed over the old files, is
	// presented from the next SIGHUP on; one that cannot be read leaves the
	// last in use.
	certPath2, keyPath2, pool2 := selfSigned(t, t.TempDir())
	require.NoError(t, os.Rename(keyPath2, keyPath))
	require.NoError(t, os.Rename(certPath2, certPath))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	// Each SIGHUP reloads the certificate: wait for the new one's line.
	newPEM, err := os.ReadFile(certPath)
	require.NoError(t, err)
	block, _ := pem.Decode(newPEM)
	require.NotNil(t, block)
	sum := sha256.Sum256(block.Bytes)
	want, got := hex.EncodeToString(sum[:]), ""
	for i := 0; i < 5 && got != want; i++ { // one line a SIGHUP so far
		got = fmt.Sprint(nextMsg(t, lines, "certificate reloaded")["sha256"])
	}
	require.Equal(t, want, got, "the new certificate's reload is logged")
	// A new connection, whose handshake sees what the server presents now:
	// one of tr's may still be on its way back to the idle pool.
	fresh := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer fresh.CloseIdleConnections()
	_, err = (&http.Client{Transport: fresh, Timeout: 30 * time.Second}).Get(base + "/healthz")
	require.ErrorContains(t, err, "certificate", "the first certificate is no longer presented")
	tr2 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool2}}
	defer tr2.CloseIdleConnections()
	c = &http.Client{Transport: tr2, Timeout: 30 * time.Second}
	require.Equal(t, http.StatusOK, do("GET", "/healthz", "").StatusCode)
	require.NoError(t, os.WriteFile(certPath, []byte("not PEM"), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	nextMsg(t, lines, "certificate not reloaded: the earlier one stays in use")
	tr2.CloseIdleConnections()
	require.Equal(t, http.StatusOK, do("GET", "/healthz", "").StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	nextMsg(t, lines, "stopped")
	for range lines { // to EOF, before Wait closes the pipe
	}
	require.NoError(t, cmd.Wait())
}
