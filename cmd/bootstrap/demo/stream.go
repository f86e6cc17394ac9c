package demo

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// The streaming part of the contract, served by Stream (the bootstrap in
// cmd/bootstrap/testdata/stream) rather than Handle, so that the load
// test's handler stays as it is:
//
//	{"stream":N}        respond with exactly N bytes (StreamBody(N)) as a stream
//	{"chunk":C}         at most C bytes per Read, so per chunk (default 16 KiB)
//	{"meet":K}          after the first chunk, wait until K streams have sent theirs
//	{"fail":"msg","fail_at":B}
//	                    fail the stream with that message after B bytes
//	                    (0: before the first byte): an *Error, or with
//	{"fail_type":"T"} a messages.InvokeResponse_Error of that type
//
// The content type is text/plain; charset=utf-8.

// StreamEvent is the request of Stream.
type StreamEvent struct {
	Bytes    int    `json:"stream"`
	Chunk    int    `json:"chunk"`
	Meet     int    `json:"meet"`
	Fail     string `json:"fail"`
	FailAt   int    `json:"fail_at"`
	FailType string `json:"fail_type"`
}

// DefaultChunk is what one Read of a stream returns at most by default.
const DefaultChunk = 16 << 10

// Stream returns the response of ev as a reader that produces it as it is
// read: the runtime streams it.
func Stream(ctx context.Context, ev StreamEvent) (io.Reader, error) {
	if ev.Bytes < 0 || ev.Chunk < 0 || ev.FailAt < 0 {
		return nil, fmt.Errorf("demo: negative stream, chunk or fail_at in %+v", ev)
	}
	if ev.Chunk == 0 {
		ev.Chunk = DefaultChunk
	}
	return &streamReader{ctx: ctx, ev: ev}, nil
}

// StreamByte is byte i of every stream: lower-case letters in an order that
// does not repeat with any chunk size, so a chunk lost, doubled or out of
// place shows.
func StreamByte(i int) byte {
	return 'a' + byte(uint32(i)*2654435761>>7%26)
}

// StreamBody is the whole body of {"stream":n}.
func StreamBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = StreamByte(i)
	}
	return b
}

// meet releases streams in groups, after their first chunk.
var meet barrier

type streamReader struct {
	ctx context.Context
	ev  StreamEvent
	off int // bytes produced
	met bool
}

func (r *streamReader) ContentType() string { return "text/plain; charset=utf-8" }

func (r *streamReader) Read(p []byte) (int, error) {
	if r.ev.Fail != "" && r.off >= r.ev.FailAt {
		if r.ev.FailType != "" {
			return 0, messages.InvokeResponse_Error{Message: r.ev.Fail, Type: r.ev.FailType}
		}
		return 0, &Error{Message: r.ev.Fail}
	}
	if r.off > 0 && r.ev.Meet > 0 && !r.met {
		// The runtime reads again only once the first chunk is out.
		r.met = true
		if _, err := meet.wait(r.ctx, r.ev.Meet); err != nil {
			return 0, err
		}
	}
	n := min(len(p), r.ev.Chunk, r.ev.Bytes-r.off)
	if r.ev.Fail != "" {
		n = min(n, r.ev.FailAt-r.off)
	}
	if n == 0 {
		return 0, io.EOF
	}
	for i := range n {
		p[i] = StreamByte(r.off + i)
	}
	r.off += n
	return n, nil
}
