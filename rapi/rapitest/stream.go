package rapitest

import (
	"encoding/base64"
	"net/http"
)

// Streamed responses, read as the emulator's LMI mode reads them. A /response
// may carry Lambda-Runtime-Function-Response-Mode: streaming and a chunked
// body. Any other mode ends the invocation with ErrorTypeInvalidResponseMode;
// its post is answered 400. Trailers Lambda-Runtime-Function-Error-Type and
// Lambda-Runtime-Function-Error-Body (base64) after its last chunk turn it
// into a function error, answered 202. Go's net/http reads the trailers, so
// the emulator's bound on them holds here too: the whole trailer section must
// fit in 4 KiB, or the body reads as truncated.
const (
	// ResponseModeStreaming is Result.ResponseMode of a streamed response.
	ResponseModeStreaming = "streaming"
	// ErrorTypeInvalidResponseMode ends an invocation whose /response had
	// a response mode other than "streaming".
	ErrorTypeInvalidResponseMode = "Runtime.InvalidResponseModeHeader"

	hdrResponseMode = "Lambda-Runtime-Function-Response-Mode"
	hdrErrorBody    = "Lambda-Runtime-Function-Error-Body"
)

var (
	bodyInvalidMode = []byte(`{"errorMessage":"Invalid function response mode","errorType":"InvalidFunctionResponseMode"}`)
	errInvalidMode  = []byte(`{"errorMessage":"Invalid response mode header","errorType":"Runtime.InvalidResponseModeHeader"}`)
)

// responseMode returns the response mode of a /response: "" (buffered) or
// ResponseModeStreaming; ok is false for any other value.
func responseMode(r *http.Request) (mode string, ok bool) {
	switch m := r.Header.Get(hdrResponseMode); m {
	case "", ResponseModeStreaming:
		return m, true
	}
	return "", false
}

// trailerError returns the function error a /response reports in its
// trailers, or nil; r's body must have been read to its end. As in the
// emulator, a body trailer that is not base64 gives an empty body.
func trailerError(r *http.Request) *FunctionError {
	typ := r.Trailer.Get(hdrErrorType)
	if typ == "" {
		return nil
	}
	body, err := base64.StdEncoding.DecodeString(r.Trailer.Get(hdrErrorBody))
	if err != nil {
		body = nil
	}
	return &FunctionError{Type: typ, Body: body, Trailer: true}
}
