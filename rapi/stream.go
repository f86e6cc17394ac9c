package rapi

import (
	"encoding/base64"
	"fmt"
	"io"
)

// Header and trailer names and values of a streamed response.
const (
	hdrResponseMode = "Lambda-Runtime-Function-Response-Mode"
	hdrTrailer      = "Trailer"
	hdrErrorBody    = "Lambda-Runtime-Function-Error-Body"
	modeStreaming   = "streaming"
	chunkedValue    = "chunked"
)

const (
	// MaxStreamErrorBody bounds the error document of a stream that fails
	// after its first byte, before base64. The Runtime API (Go's net/http
	// in the emulator) reads the whole trailer section into its 4 KiB read
	// buffer. It refuses a longer one, failing the invocation as truncated.
	// 2 KiB of document is 2732 bytes of base64, which leaves room for the
	// error type and the names.
	MaxStreamErrorBody = 2 << 10
	// maxTrailerErrorType bounds the error type sent as a trailer.
	maxTrailerErrorType = 256
	// unknownErrorType replaces an error type that is empty or cannot go in
	// a trailer. A trailer section without a type reads as success. It is
	// what the Runtime API makes of an error type it does not accept.
	unknownErrorType = "Runtime.Unknown"
	// streamChunk is the most data one chunk carries: what one Read of the
	// body may return. Each Read that returns data becomes one chunk.
	streamChunk = 32 << 10
	// chunkPrefix is room for the size line of a chunk ("8000\r\n").
	chunkPrefix = 6
	// maxEmptyReads: a body that returns (0, nil) this many times in a row
	// fails with io.ErrNoProgress, as bufio does.
	maxEmptyReads = 100
)

// trailerDecl is the Trailer header of every streamed response.
const trailerDecl = hdrErrorType + ", " + hdrErrorBody

// lastChunk ends a chunked body without trailers.
const lastChunk = "0\r\n\r\n"

// ErrorFunc renders a read error of a streamed body as the function error to
// report: its type (Lambda-Runtime-Function-Error-Type) and its JSON
// document. sent is the number of body bytes already streamed. When it is 0
// nothing has gone out yet, and the error is posted as an ordinary /error (as
// Fail posts it). Otherwise it goes in the trailers, base64-encoded. body
// should not exceed MaxStreamErrorBody bytes then; it is cut there. A type
// that is empty, longer than 256 bytes or holds a control byte is sent as
// Runtime.Unknown. That is what the Runtime API makes of a type it refuses,
// so the invocation is answered whatever ErrorFunc returns. Stream calls it
// at most once, on its own goroutine, and reads body until it returns.
type ErrorFunc func(err error, sent int64) (errorType string, body []byte)

// chunk frames the n bytes read into sbuf as one chunk and returns it.
func (c *Conn) chunk(n int) []byte {
	start := putChunkSize(c.sbuf[:chunkPrefix], n)
	end := chunkPrefix + n
	c.sbuf[end], c.sbuf[end+1] = '\r', '\n'
	return c.sbuf[start : end+2]
}

// putChunkSize writes n in hex and CRLF at the end of prefix and returns
// where it starts. n is at most streamChunk.
func putChunkSize(prefix []byte, n int) int {
	i := len(prefix) - 2
	prefix[i], prefix[i+1] = '\r', '\n'
	for {
		i--
		prefix[i] = "0123456789abcdef"[n&0xf]
		n >>= 4
		if n == 0 {
			return i
		}
	}
}

// readSome reads once into p, retrying reads that return nothing and no
// error, up to maxEmptyReads.
func readSome(r io.Reader, p []byte) (int, error) {
	for range maxEmptyReads {
		n, err := r.Read(p)
		if n < 0 || n > len(p) {
			return 0, fmt.Errorf("body Read returned %d for a buffer of %d bytes", n, len(p))
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// buildStreamHead prepares the header of a streamed POST
// .../invocation/{id}/response in r.head.
func buildStreamHead(r *request, p *prefixes, inv *Invocation, contentType string) error {
	h, err := responseHead(r, p, inv, contentType)
	if err != nil {
		return err
	}
	h = appendHeader(h, hdrResponseMode, modeStreaming)
	h = appendHeader(h, hdrTransferEnc, chunkedValue)
	h = appendHeader(h, hdrTrailer, trailerDecl)
	r.finishHead(h)
	return nil
}

// streamErrorType returns errorType, or unknownErrorType when it is empty or
// cannot be sent. So a stream answers its invocation whatever onError
// returns.
func streamErrorType(errorType string) string {
	if errorType == "" || checkHeaderValue(hdrErrorType, errorType, maxTrailerErrorType) != nil {
		return unknownErrorType
	}
	return errorType
}

// appendErrorTrailers appends the last chunk with the error trailers; doc
// is cut to MaxStreamErrorBody.
func appendErrorTrailers(h []byte, errorType string, doc []byte) []byte {
	errorType = streamErrorType(errorType)
	if len(doc) > MaxStreamErrorBody {
		doc = doc[:MaxStreamErrorBody]
	}
	h = append(h, "0\r\n"...)
	h = appendHeader(h, hdrErrorType, errorType)
	h = append(h, hdrErrorBody+": "...)
	h = base64.StdEncoding.AppendEncode(h, doc)
	return append(h, "\r\n\r\n"...)
}
