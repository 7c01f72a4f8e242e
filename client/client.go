package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxReplyBytes is the longest reply body a Client reads unless
// Options says otherwise: room for an echo result of a full 8 MiB request
// (the server's default max_body_bytes), even with JSON's escaping.
const DefaultMaxReplyBytes = 32 << 20

// Options are a Client's optional settings.
type Options struct {
	// HTTPClient sends every request; its Transport and Timeout apply. If
	// left nil, http.DefaultClient does.
	HTTPClient *http.Client
	// MaxReplyBytes bounds the body of one reply: a longer one is an error.
	// If zero, DefaultMaxReplyBytes; negative is refused.
	MaxReplyBytes int64
	// Token, when not empty, is sent on every request as
	// "Authorization: Bearer Token", for a server with a token file. If
	// left empty, no Authorization is sent.
	Token string

	_ struct{} // forbid positional literals
}

// Client sends requests to one server. It is safe for concurrent use: New
// sets every field and nothing changes them.
type Client struct {
	base     *url.URL // its path ends in "/": routes are resolved below it
	hc       *http.Client
	maxReply int64
	authz    string // the Authorization of every request; empty for none
}

// New returns a Client of the API at base, an http or https URL whose path,
// if any, is the prefix the API is mounted under.
func New(base string, opts Options) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port][/prefix]", base)
	}
	if opts.MaxReplyBytes < 0 {
		return nil, fmt.Errorf("client: MaxReplyBytes %d is negative", opts.MaxReplyBytes)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	if strings.ContainsAny(opts.Token, " \t\r\n") {
		return nil, errors.New("client: Token holds white space")
	}
	c := &Client{base: u, hc: opts.HTTPClient, maxReply: opts.MaxReplyBytes}
	if opts.Token != "" {
		c.authz = "Bearer " + opts.Token
	}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	if c.maxReply == 0 {
		c.maxReply = DefaultMaxReplyBytes
	}
	return c, nil
}

// route returns the URL of path (relative, unescaped segments joined by
// "/"; each job id escaped) below the base, with query q.
func (c *Client) route(q url.Values, segments ...string) *url.URL {
	u := *c.base
	var raw strings.Builder
	raw.WriteString(c.base.EscapedPath())
	for i, s := range segments {
		if i > 0 {
			raw.WriteByte('/')
			u.Path += "/"
		}
		raw.WriteString(url.PathEscape(s))
		u.Path += s
	}
	u.RawPath = raw.String()
	u.RawQuery = q.Encode()
	return &u
}

// jobRoute is the URL of job id's route: "" for the job itself, or "wait",
// "result", "cancel".
func (c *Client) jobRoute(id, sub string, q url.Values) *url.URL {
	if sub == "" {
		return c.route(q, "jobs", id)
	}
	return c.route(q, "jobs", id, sub)
}

// reply is one reply, read whole.
type reply struct {
	method string
	url    *url.URL // the request's, after any redirect
	status int
	header http.Header
	body   []byte
}

// do sends one request, with body as application/json when not nil and
// the fields of hdr, and reads the reply.
func (c *Client) do(ctx context.Context, method string, u *url.URL, body []byte, hdr ...[2]string) (*reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.authz != "" {
		req.Header.Set("Authorization", c.authz)
	}
	for _, f := range hdr {
		req.Header.Add(f[0], f[1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{method: method, url: resp.Request.URL, status: resp.StatusCode, header: resp.Header}
	r.body, err = io.ReadAll(io.LimitReader(resp.Body, c.maxReply+1))
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: reading the reply: %w", method, r.url, err)
	}
	if int64(len(r.body)) > c.maxReply {
		return nil, fmt.Errorf("client: %s %s: reply longer than %d bytes", method, r.url, c.maxReply)
	}
	return r, nil
}

// call sends one request and decodes a reply of status want into v. Any
// other status is an *Error that unwraps to sentinels[status], if any.
func (c *Client) call(ctx context.Context, method string, u *url.URL, body []byte, want int, v any, sentinels map[int]error) (*reply, error) {
	r, err := c.do(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if r.status != want {
		return nil, newError(r, sentinels[r.status])
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return nil, fmt.Errorf("client: %s %s: %d reply: %w", method, r.url, r.status, err)
	}
	return r, nil
}

// The sentinels that each route's statuses mean.
var (
	submitErrors = map[int]error{http.StatusTooManyRequests: ErrQueueFull, http.StatusServiceUnavailable: ErrUnavailable}
	jobErrors    = map[int]error{http.StatusNotFound: ErrNotFound, http.StatusServiceUnavailable: ErrUnavailable}
	resultErrors = map[int]error{http.StatusNotFound: ErrNotFound, http.StatusConflict: ErrNotDone, http.StatusServiceUnavailable: ErrUnavailable}
	cancelErrors = map[int]error{http.StatusNotFound: ErrNotFound, http.StatusConflict: ErrTerminal, http.StatusServiceUnavailable: ErrUnavailable}
	otherErrors  = map[int]error{http.StatusServiceUnavailable: ErrUnavailable} // /infer, /metrics, GET /jobs
)

// millis formats d as the whole milliseconds of a wait's timeout.
func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
