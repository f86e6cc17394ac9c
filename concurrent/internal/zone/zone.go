// Package zone reads the execution environment's Availability Zone ID
// from Lambda's metadata endpoint, once, and keeps it.
package zone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Get (concurrent's ErrNoMetadata and ErrMetadata).
var (
	// ErrNoMetadata: AWS_LAMBDA_METADATA_API or AWS_LAMBDA_METADATA_TOKEN
	// is not set.
	ErrNoMetadata = errors.New("concurrent: no Lambda metadata endpoint (AWS_LAMBDA_METADATA_API or AWS_LAMBDA_METADATA_TOKEN not set)")
	// ErrMetadata: the endpoint is set but cannot be read.
	ErrMetadata = errors.New("concurrent: Lambda metadata endpoint failed")
)

// Lambda's metadata endpoint
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-metadata-endpoint.html):
// GET http://$AWS_LAMBDA_METADATA_API/2026-01-15/metadata/execution-environment
// with "Authorization: Bearer $AWS_LAMBDA_METADATA_TOKEN" answers
// {"AvailabilityZoneID":"use1-az1"}.
const (
	envMetadataAPI   = "AWS_LAMBDA_METADATA_API"
	envMetadataToken = "AWS_LAMBDA_METADATA_TOKEN"
	metadataPath     = "/2026-01-15/metadata/execution-environment"

	// zoneTimeout bounds the request: the endpoint is local to the
	// execution environment.
	zoneTimeout = time.Second
	// zoneRetry is how long a failed read is returned without a new
	// request: a broken endpoint costs one request (and one wait) per
	// interval, not one per invocation, and a passing fault heals.
	zoneRetry = 30 * time.Second
	// zoneMaxBody bounds the answer read; the endpoint's is tens of bytes.
	zoneMaxBody = 64 << 10
	// zoneMaxID bounds a zone ID: use1-az1, usw2-lax1-az1.
	zoneMaxID = 64
)

// zoneClient reads the endpoint: no proxy (HTTP_PROXY must not see the
// token), no redirect, no connection kept after the one request.
var zoneClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Reader reads the zone once and keeps it.
type Reader struct {
	lookup func(string) (string, bool)
	// Timeout bounds the request: 1 s unless a test changes it.
	Timeout time.Duration
	now     func() time.Time
	// Waiting, when set (tests), is called by each call that is about to
	// wait for the request in flight.
	Waiting func()

	id atomic.Pointer[string] // set once read

	mu sync.Mutex
	// inflight is closed when the request in flight has ended and its
	// result is stored; nil when there is none.
	inflight chan struct{}
	err      error     // the last failure, returned until errUntil
	errUntil time.Time // when err stops being returned without a request
}

// NewReader is a Reader of the endpoint that lookup's variables name.
func NewReader(lookup func(string) (string, bool)) *Reader {
	return &Reader{lookup: lookup, Timeout: zoneTimeout, now: time.Now}
}

// Get returns the zone ID, reading it first if need be: see
// concurrent.AvailabilityZoneID.
func (z *Reader) Get(ctx context.Context) (string, error) {
	if id := z.id.Load(); id != nil {
		return *id, nil
	}
	z.mu.Lock()
	if id := z.id.Load(); id != nil {
		z.mu.Unlock()
		return *id, nil
	}
	done := z.inflight
	if done == nil {
		if z.err != nil && z.now().Before(z.errUntil) {
			err := z.err
			z.mu.Unlock()
			return "", err
		}
		endpoint, token, err := z.endpoint()
		if err != nil {
			z.mu.Unlock()
			return "", err
		}
		// The request runs on its own goroutine, bounded by the timeout, so
		// that a caller whose context ends does not fail the others.
		done = make(chan struct{})
		z.inflight = done
		go z.fetch(endpoint, token, done)
	}
	z.mu.Unlock()
	if z.Waiting != nil {
		z.Waiting()
	}
	select {
	case <-done:
	case <-ctx.Done():
		return "", fmt.Errorf("concurrent: waiting for the availability zone: %w", context.Cause(ctx))
	}
	if id := z.id.Load(); id != nil {
		return *id, nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	return "", z.err
}

// endpoint returns the endpoint's URL and token from the environment, read
// on each call until the zone is known: reading two variables costs less
// than remembering that they were absent, and a test may set them later.
func (z *Reader) endpoint() (endpoint, token string, err error) {
	api, _ := z.lookup(envMetadataAPI)
	token, _ = z.lookup(envMetadataToken)
	if api == "" || token == "" {
		return "", "", ErrNoMetadata
	}
	endpoint = "http://" + api + metadataPath
	host, _, err := net.SplitHostPort(api)
	if u, perr := url.Parse(endpoint); err != nil || perr != nil || host == "" || u.Host != api || u.Path != metadataPath {
		return "", "", fmt.Errorf("%w: %s is not host:port: %q", ErrMetadata, envMetadataAPI, api)
	}
	return endpoint, token, nil
}

// fetch makes the request and stores its result, then closes done.
func (z *Reader) fetch(endpoint, token string, done chan struct{}) {
	id, err := z.request(endpoint, token)
	z.mu.Lock()
	if err == nil {
		z.id.Store(&id)
	} else {
		z.err, z.errUntil = err, z.now().Add(zoneRetry)
	}
	z.inflight = nil
	z.mu.Unlock()
	close(done)
}

func (z *Reader) request(endpoint, token string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), z.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := zoneClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: status %s", ErrMetadata, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, zoneMaxBody+1))
	if err != nil {
		return "", fmt.Errorf("%w: reading the answer: %w", ErrMetadata, err)
	}
	if len(body) > zoneMaxBody {
		return "", fmt.Errorf("%w: answer larger than %d bytes", ErrMetadata, zoneMaxBody)
	}
	id, err := parseZone(body)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	return id, nil
}

// parseZone reads the endpoint's answer: a JSON object whose member named
// exactly AvailabilityZoneID is a zone ID. Other members are ignored, as
// the endpoint may add some.
func parseZone(body []byte) (string, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("answer is not a JSON object: %w", err)
	}
	raw, ok := doc["AvailabilityZoneID"]
	if !ok {
		return "", errors.New("answer has no AvailabilityZoneID")
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", fmt.Errorf("AvailabilityZoneID is not a string: %w", err)
	}
	if !validZoneID(id) {
		if len(id) > zoneMaxID {
			return "", fmt.Errorf("AvailabilityZoneID of %d bytes is not a zone ID", len(id))
		}
		return "", fmt.Errorf("AvailabilityZoneID %q is not a zone ID", id)
	}
	return id, nil
}

// validZoneID reports whether id has a zone ID's shape: 1 to 64 ASCII
// letters, digits and hyphens. It keeps whatever else the endpoint might
// send out of logs and span attributes.
func validZoneID(id string) bool {
	if id == "" || len(id) > zoneMaxID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !zoneIDByte(id[i]) {
			return false
		}
	}
	return true
}

// zoneIDByte reports whether c may be in a zone ID.
func zoneIDByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}
