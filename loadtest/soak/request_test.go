package soak

import (
	"bytes"
	"strings"
	"testing"
)

// TestRequest: each invocation of the forms phase carries its token and
// what its handler is asked to do, and meets its fault.
func TestRequest(t *testing.T) {
	inv := func(fault, do string) soakInv { return soakInv{i: 7, token: "tok-typed-7", fault: fault, do: do} }
	r := request("typed", inv(faultNone, "ok"))
	if string(r.Payload) != `{"token":"tok-typed-7","do":"ok"}` || r.Fault != nil || r.PostFault != nil {
		t.Errorf("no fault: %+v", r)
	}
	if r := request("typed", inv(faultSIGTERM, "sleep")); !bytes.Contains(r.Payload, []byte(`"sleep_ms":100,"announce":true`)) {
		t.Errorf("the SIGTERM tail's handlers do not say they started: %s", r.Payload)
	}
	if r := request("http", inv(faultNone, "ok")); !bytes.HasPrefix(r.Payload, []byte(`{"version":"2.0"`)) {
		t.Errorf("an http.Handler's event is not a payload format 2.0 event: %s", r.Payload)
	}
	if r := request("typed", inv(faultNextCutHdr, "ok")); r.Fault == nil || r.Fault.Cut != -(len(r.Payload)+2+10) {
		t.Errorf("cut in the headers: %+v", r.Fault)
	}
	for _, f := range []string{faultRepostStall, faultPostLostRST, faultPostLostFIN} {
		if r := request("typed", inv(f, "ok")); !strings.HasPrefix(r.Headers["Lambda-Runtime-Aws-Request-Id"], f+"-") {
			t.Errorf("%s: the request ID does not name the fault: %v", f, r.Headers)
		}
	}
	if r := request("typed", inv(faultPostHead, "ok")); r.PostFault == nil || string(r.PostFault.Raw) != "HTTP/1.1 202 Accepted\r\n" {
		t.Errorf("a reply cut after its status line: %+v", r.PostFault)
	}
}
