package rapi

import (
	"context"
	"fmt"
	"time"
)

// The Extensions API, version 2020-01-01, as far as an internal extension
// that only enables SIGTERM needs it.
//
// Lambda sends the runtime SIGTERM before it shuts an execution environment
// down only when an extension is registered. The Extensions API contract for
// such an internal extension, read from the AWS Runtime Interface Emulator
// (rapi/handler/agentregister.go, agentnext.go, rapid/handlers.go) and
// matching what aws-lambda-go's WithEnableSIGTERM does:
//
//   - POST /2020-01-01/extension/register with Lambda-Extension-Name and
//     {"events":[]} before the runtime's first /next: registration closes
//     when init ends. An internal extension may subscribe to no event at all
//     (the emulator refuses events for it with 403); the answer carries its
//     Lambda-Extension-Identifier.
//   - Registering is not enough: init completes only when every registered
//     extension has called GET /2020-01-01/extension/event/next once (the
//     emulator waits for it until the init timeout, then fails init). For an
//     extension with no events that call never returns: it is held open for
//     the life of the process.
const (
	pathExtRegister  = "/2020-01-01/extension/register"
	pathExtEventNext = "/2020-01-01/extension/event/next"
	hdrExtName       = "Lambda-Extension-Name"
	hdrExtID         = "Lambda-Extension-Identifier"

	opExtRegister = "extension/register"
	opExtNext     = "extension/event/next"

	// maxExtName and maxExtID bound what is sent and accepted as a name
	// and an identifier (the platform's are short: a name, a UUID).
	maxExtName = 256
	maxExtID   = 1 << 10
)

// registerNoEvents is the body of a registration that subscribes to nothing.
var registerNoEvents = []byte(`{"events":[]}`)

// RegisterExtension registers an internal extension called name that
// subscribes to no event, and returns its identifier, for
// AwaitExtensionEvent. Call it during init, before the first Next. It uses a
// connection of its own and closes it.
func (c *Client) RegisterExtension(ctx context.Context, name string) (id string, err error) {
	if name == "" || len(name) > maxExtName {
		return "", fmt.Errorf("rapi: %s: %w: extension name %q", opExtRegister, ErrInvalid, clipString(name))
	}
	if err := checkHeaderValue(hdrExtName, name, maxExtName); err != nil {
		return "", fmt.Errorf("rapi: %s: %w", opExtRegister, err)
	}
	cn := newConn(c)
	defer cn.Close()
	h := cn.req.head[:0]
	h = append(h, "POST "+pathExtRegister...)
	h = append(h, c.pre.afterPath...)
	h = appendHeader(h, hdrExtName, name)
	h = appendHeader(h, hdrContentType, contentJSON)
	cn.req.finish(h, registerNoEvents)
	var sink extSink
	if err := cn.exchange(ctx, opExtRegister, &cn.req, &sink); err != nil {
		return "", err
	}
	if len(sink.id) == 0 {
		return "", fmt.Errorf("rapi: %s: %w: no %s header", opExtRegister, errMalformed, hdrExtID)
	}
	return string(sink.id), nil
}

// AwaitExtensionEvent long-polls GET /2020-01-01/extension/event/next for
// the extension id and returns when an event arrives (nil), ctx is done, or
// the connection fails. An extension registered with no events gets none:
// the call then blocks until ctx is done. That is its purpose: the Runtime
// API counts the extension ready, and init complete, once it has called.
// It uses a connection of its own and closes it.
func (c *Client) AwaitExtensionEvent(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("rapi: %s: %w: empty extension identifier", opExtNext, ErrInvalid)
	}
	if err := checkHeaderValue(hdrExtID, id, maxExtID); err != nil {
		return fmt.Errorf("rapi: %s: %w", opExtNext, err)
	}
	cn := newConn(c)
	defer cn.Close()
	h := cn.req.head[:0]
	h = append(h, "GET "+pathExtEventNext...)
	h = append(h, c.pre.afterPath...)
	h = appendHeader(h, hdrExtID, id)
	cn.req.finishHead(h)
	return cn.exchange(ctx, opExtNext, &cn.req, nil)
}

// exchange sends r and reads its answer, handing the headers of a 2xx
// answer to sink; the body is skipped. It is for the Extensions API calls,
// made once each on a Conn of their own.
func (c *Conn) exchange(ctx context.Context, op string, r *request, sink headerSink) error {
	defer c.trim()
	if err := c.begin(ctx, op); err != nil {
		return err
	}
	if err := c.write(r, false); err != nil {
		return c.fail(ctx, op, err)
	}
	return c.answer(ctx, op, sink, time.Time{}) // no post to cut: the wait is the call
}

// extSink keeps the Lambda-Extension-Identifier of a registration answer.
type extSink struct {
	id   []byte
	seen bool
}

func (s *extSink) header(name, v []byte) error {
	if !equalFold(name, hdrExtID) {
		return nil
	}
	if s.seen {
		return fmt.Errorf("%w: repeated %s header", errMalformed, hdrExtID)
	}
	s.seen = true
	if len(v) == 0 || len(v) > maxExtID {
		return fmt.Errorf("%w: bad %s %q", errMalformed, hdrExtID, clip(v))
	}
	s.id = append(s.id[:0], v...)
	return nil
}
