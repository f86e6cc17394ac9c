package rapi

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"
)

// Defaults of Options.
const (
	defaultMaxRequestBytes = 6<<20 + 100 // what the Runtime API itself accepts
	defaultDialTimeout     = 5 * time.Second
	// defaultReadBufferSize holds a /next answer's head and a small payload;
	// a larger body is read past it, straight into the payload. Against
	// 4 KiB at N=1600, peak RSS was 37.7 MiB, not 46.4. CPU per tiny
	// invocation was 49 µs, not 53; N=1 and N=64 were the same. Old and new
	// bootstraps ran interleaved, 5 runs, with:
	//
	//	go -C loadtest run . compare -lmigo NEW -ref OLD -scenario tiny-n1600,tiny-n64,tiny-n1 -reps 5
	defaultReadBufferSize = 1 << 10
	defaultStallTimeout   = 10 * time.Second
)

// Options configure a Client. The zero value of a field means its default.
type Options struct {
	// MaxRequestBytes bounds the /next body read into Invocation.Payload.
	MaxRequestBytes int
	// DialTimeout bounds each dial (besides the call's context).
	DialTimeout time.Duration
	// Dial opens connections; default a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ReadBufferSize is the bufio.Reader size of each Conn (256 B to 1 MiB).
	// Lines longer than it still parse, up to the 64 KiB header cap.
	ReadBufferSize int
	// StallTimeout bounds the rest of a /next answer once its first byte
	// has arrived. Conn.CutIfStalled cuts off a peer that stopped
	// mid-answer for longer. The wait for the first byte, the long poll
	// itself, is never bounded.
	StallTimeout time.Duration
}

// Option changes Options.
type Option func(*Options)

// WithMaxRequestBytes sets Options.MaxRequestBytes (n > 0).
func WithMaxRequestBytes(n int) Option { return func(o *Options) { o.MaxRequestBytes = n } }

// withDialTimeout sets Options.DialTimeout (d > 0); tests only.
func withDialTimeout(d time.Duration) Option { return func(o *Options) { o.DialTimeout = d } }

// withDialer sets Options.Dial; tests only.
func withDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *Options) { o.Dial = dial }
}

// WithStallTimeout sets Options.StallTimeout (d > 0).
func WithStallTimeout(d time.Duration) Option { return func(o *Options) { o.StallTimeout = d } }

// withReadBufferSize sets Options.ReadBufferSize; tests only.
func withReadBufferSize(n int) Option { return func(o *Options) { o.ReadBufferSize = n } }

// Client holds what all connections to one Runtime API share. It is
// immutable after New and safe for concurrent use.
type Client struct {
	addr string
	opts Options
	pre  *prefixes
}

// New returns a Client for the Runtime API at addr ("host:port", as in
// AWS_LAMBDA_RUNTIME_API). It opens no connection.
func New(addr string, opts ...Option) (*Client, error) {
	if err := checkAddr(addr); err != nil {
		return nil, err
	}
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.MaxRequestBytes < 0:
		return nil, fmt.Errorf("rapi: %w: MaxRequestBytes %d", ErrInvalid, o.MaxRequestBytes)
	case o.DialTimeout < 0:
		return nil, fmt.Errorf("rapi: %w: DialTimeout %v", ErrInvalid, o.DialTimeout)
	case o.StallTimeout < 0:
		return nil, fmt.Errorf("rapi: %w: StallTimeout %v", ErrInvalid, o.StallTimeout)
	case o.ReadBufferSize != 0 && (o.ReadBufferSize < 256 || o.ReadBufferSize > 1<<20):
		return nil, fmt.Errorf("rapi: %w: ReadBufferSize %d not in [256, 1 MiB]", ErrInvalid, o.ReadBufferSize)
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = defaultMaxRequestBytes
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.ReadBufferSize == 0 {
		o.ReadBufferSize = defaultReadBufferSize
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = defaultStallTimeout
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	return &Client{addr: addr, opts: o, pre: newPrefixes(addr, "lmigo ("+runtime.Version()+")")}, nil
}

// checkAddr accepts host:port with a non-empty port and nothing that could
// break the Host header.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("rapi: %w: address %q is not host:port", ErrInvalid, addr)
	}
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; c <= ' ' || c >= 0x7f || c == '/' || c == '?' || c == '#' || c == '@' {
			return fmt.Errorf("rapi: %w: address %q", ErrInvalid, addr)
		}
	}
	return nil
}

// StallTimeout returns Options.StallTimeout, for the caller that runs
// Conn.CutIfStalled.
func (c *Client) StallTimeout() time.Duration { return c.opts.StallTimeout }

// Conn returns a new connection, dialed lazily on its first call. Each
// slot of a runtime owns one.
func (c *Client) Conn() *Conn {
	return newConn(c)
}

// InitError posts POST /runtime/init/error on a connection of its own, then
// closes it. The runtime must exit afterwards: the post does not end init.
func (c *Client) InitError(ctx context.Context, errorType string, body []byte) error {
	cn := newConn(c)
	defer cn.Close()
	if err := buildInitError(&cn.req, c.pre, errorType, body); err != nil {
		return fmt.Errorf("rapi: %s: %w", opInitError, err)
	}
	return cn.post(ctx, opInitError, &cn.req, false)
}
