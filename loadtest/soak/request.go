package soak

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// What each invocation of the forms phase asks of its handler, and the
// fault it meets.

// httpForm reports whether form serves an http.Handler: its event is a
// payload format 2.0 event, its answer an HTTP answer.
func httpForm(form string) bool { return form == "http" || form == "httpstream" || form == "wrapped" }

// streamForm reports whether form streams its answers.
func streamForm(form string) bool {
	return form == "stream" || form == "writerto" || form == "httpstream" || form == "wrapped"
}

// The faults, one per invocation by its index, in a cycle of
// len(soakFaultCycle); "" is none.
const (
	faultNone         = "none"
	faultPost410      = "post-410"        // the answer is taken, the runtime is told 410
	faultPost400      = "post-400"        // ... 400
	faultPost413      = "post-413"        // ... 413
	faultPostReset    = "post-reset"      // ... its connection reset instead of a reply
	faultPostSlow     = "post-slow"       // the reply to the answer comes 20 ms late
	faultPostLostRST  = "post-lost-reset" // the answer read whole, not taken, its connection reset
	faultPostLostFIN  = "post-lost-close" // ... its connection closed
	faultPostStalled  = "post-stalled"    // the answer is taken, its reply never comes: the runtime cuts it
	faultPostHead     = "post-head"       // ... only its reply's status line comes: the runtime cuts it
	faultRepostStall  = "repost-stalled"  // ... its reply never comes, nor that of the answer posted again
	faultPastDeadline = "past-deadline"   // handed out with a deadline already past by the runtime's clock
	faultNextReset    = "next-reset"      // the /next reply reset: withheld
	faultNextCutID    = "next-cut-status" // the /next reply cut in its status line: withheld
	faultNextCutHdr   = "next-cut-header" // cut in the header lines after the request ID
	faultNextCutBdy   = "next-cut-body"   // cut mid-payload
	faultNextSlow     = "next-slow"       // the /next reply comes 20 ms late
	faultSIGTERM      = "sigterm"         // in flight when SIGTERM came
	faultPollReset    = "poll-reset"      // a /next reset before it was registered (by call index)
)

var soakFaultCycle = []string{
	faultPost410, faultNone, faultNextCutHdr, faultPost400, faultNone, faultNextReset, faultPost413,
	faultNone, faultNextCutBdy, faultPostReset, faultNone, faultNextSlow, faultNone, faultNextCutID,
	faultPostSlow, faultNone, faultPostLostRST, faultNone, faultPostLostFIN, faultNone,
	faultPostStalled, faultPastDeadline, faultPostHead, faultNone, faultRepostStall,
}

// soakDos are what the handler is asked to do, by index / len(soakFaultCycle),
// so that every fault meets every outcome.
var soakDos = []string{"ok", "error", "ok", "panic", "ok", "sleep", "ok", "error", "late", "ok", "huge", "ok"}

// request is the invocation inv of form: its payload, which asks the
// handler to do what inv says, and its fault.
func request(form string, inv soakInv) rapitest.Request {
	sleep := ""
	if inv.do == "sleep" {
		sleep = `,"sleep_ms":20`
		if inv.fault == faultSIGTERM {
			sleep = `,"sleep_ms":100,"announce":true` // still running when SIGTERM comes
		}
	}
	do := inv.do
	if do == "sleep" {
		do = "ok"
	}
	req := rapitest.Request{Payload: fmt.Appendf(nil, `{"token":%q,"do":%q%s}`, inv.token, do, sleep)}
	if httpForm(form) {
		req.Payload = httpEvent(req.Payload)
	}
	n := len(req.Payload)
	switch inv.fault {
	case faultPost410:
		req.PostFault = &rapitest.Fault{Status: http.StatusGone}
	case faultPost400:
		req.PostFault = &rapitest.Fault{Status: http.StatusBadRequest}
	case faultPost413:
		req.PostFault = &rapitest.Fault{Status: http.StatusRequestEntityTooLarge}
	case faultPostReset:
		req.PostFault = &rapitest.Fault{Reset: true}
	case faultPostSlow:
		req.PostFault = &rapitest.Fault{Stall: 20 * time.Millisecond}
	case faultPostStalled:
		// Its slot waits for that reply until the deadline plus
		// LMIGO_OVERRUN_GRACE, and at least rapi's stall timeout (10 s)
		// from the post, then polls anew.
		req.PostFault = &rapitest.Fault{Stall: time.Hour}
	case faultPostHead:
		req.PostFault = &rapitest.Fault{Raw: []byte("HTTP/1.1 202 Accepted\r\n"), Stall: time.Hour}
	case faultRepostStall:
		// repostStalled stalls the answer posted again once the first
		// reply was cut: the slot waits out a second bound.
		req.PostFault = &rapitest.Fault{Stall: time.Hour}
		req.Headers = map[string]string{"Lambda-Runtime-Aws-Request-Id": inv.fault + "-" + inv.token}
	case faultPastDeadline:
		// The fake keeps its own deadline: the runtime must not take the
		// slot back on this one.
		req.Headers = map[string]string{"Lambda-Runtime-Deadline-Ms": strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)}
	case faultPostLostRST, faultPostLostFIN:
		// lostPost ends the first post of this request ID unanswered.
		req.Headers = map[string]string{"Lambda-Runtime-Aws-Request-Id": inv.fault + "-" + inv.token}
	case faultNextReset:
		req.Fault, req.Timeout = &rapitest.Fault{Reset: true}, time.Second
	case faultNextCutID:
		req.Fault, req.Timeout = &rapitest.Fault{Cut: 20}, time.Second
	case faultNextCutHdr:
		// Headers are written sorted: Lambda-Runtime-Trace-Id comes last,
		// after the request ID; cut 10 bytes into its value's end.
		req.Fault = &rapitest.Fault{Cut: -(n + 2 + 10)}
	case faultNextCutBdy:
		req.Fault = &rapitest.Fault{Cut: -(n / 2)}
	case faultNextSlow:
		req.Fault = &rapitest.Fault{Stall: 20 * time.Millisecond}
	}
	return req
}

// httpEvent wraps a soak event as the body of a payload format 2.0 event.
func httpEvent(body []byte) []byte {
	return fmt.Appendf(nil, `{"version":"2.0","routeKey":"$default","rawPath":"/soak","rawQueryString":"",`+
		`"headers":{"content-type":"application/json"},"requestContext":{"http":{"method":"POST","path":"/soak",`+
		`"protocol":"HTTP/1.1","sourceIp":"127.0.0.1"},"domainName":"soak.example"},"body":%q,"isBase64Encoded":false}`, body)
}

// lostPost ends unanswered the first post for an invocation whose request
// ID names a post-lost fault, after reading it whole: a Runtime API that
// had the answer and went away without taking it. The runtime must post it
// again.
func lostPost(r *http.Request, lost *sync.Map) *rapitest.Fault {
	for _, f := range []string{faultPostLostRST, faultPostLostFIN} {
		i := strings.Index(r.URL.Path, "/"+f+"-")
		if i < 0 {
			continue
		}
		id := r.URL.Path[i+1:]
		id = id[:strings.IndexByte(id, '/')]
		if _, seen := lost.LoadOrStore(id, true); seen {
			return nil
		}
		return &rapitest.Fault{Reset: f == faultPostLostRST, Drop: f == faultPostLostFIN, ReadBody: true}
	}
	return nil
}

// repostStalled stalls, unserved, the second post for an invocation whose
// request ID names faultRepostStall: the answer the runtime posts again
// once it cut the first one's reply, which never came either.
func repostStalled(r *http.Request, seen *sync.Map) *rapitest.Fault {
	i := strings.Index(r.URL.Path, "/"+faultRepostStall+"-")
	if i < 0 {
		return nil
	}
	id := r.URL.Path[i+1:]
	id = id[:strings.IndexByte(id, '/')]
	if _, again := seen.LoadOrStore(id, true); !again {
		return nil // served: its reply stalls (PostFault)
	}
	return &rapitest.Fault{Drop: true, ReadBody: true, Stall: time.Hour}
}
