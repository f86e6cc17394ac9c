package soak

import (
	"bytes"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// answerOK reports whether r is the answer inv asked for; body is its
// response or error body.
func (fr *formRun) answerOK(inv soakInv, r rapitest.Result, body []byte) bool {
	own := bytes.Contains(body, []byte(inv.token))
	failing := inv.do == "error" || inv.do == "panic" || inv.do == "huge"
	switch {
	case inv.fault == faultNextCutHdr || inv.fault == faultNextCutBdy:
		return r.Err != nil // the runtime got half an invocation: an error, never a response
	case (inv.fault == faultPostLostRST || inv.fault == faultPostLostFIN) && streamForm(fr.form) &&
		r.Err != nil && r.Err.Type == errTypeStreamInterrupted:
		return true
	case httpForm(fr.form):
		// Failures are HTTP answers: 500, with the error's text, or
		// lambdahttp's own for a panic.
		status := []byte(`"statusCode":200`)
		if failing {
			status = []byte(`"statusCode":500`)
		}
		return r.Err == nil && bytes.Contains(body, status) && (own || inv.do == "panic" || inv.do == "huge")
	case failing:
		return r.Err != nil && own
	}
	return r.Err == nil && own
}

// modeOK reports whether r, a response, came in the form's response mode.
func (fr *formRun) modeOK(r rapitest.Result) bool {
	return r.Err != nil || (r.ResponseMode == rapitest.ResponseModeStreaming) == streamForm(fr.form)
}
