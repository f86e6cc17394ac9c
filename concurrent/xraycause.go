package concurrent

import (
	"github.com/lmigo/lmigo/concurrent/internal/xraycause"
	"github.com/lmigo/lmigo/rapi"
)

// The X-Ray error cause of an /error: made by package xraycause, bounded
// here by what the answer's header leaves it.

// Bounds of the cause (xraycause).
const (
	maxXRayCause    = xraycause.Max
	maxXRayCauseCut = xraycause.MaxCut
)

// withXRayCause appends to b, behind the error document it holds, the
// X-Ray cause of that document for the answer to inv, and returns both.
// cause is empty when the document does not parse, which errordoc.Encode's
// never fails to.
func withXRayCause(b *Buffer, inv *rapi.Invocation) (doc, cause []byte) {
	n := len(b.B)
	b.B = xraycause.Append(b.B, b.B[:n], xrayCauseLimit(inv))
	return b.B[:n:n], b.B[n:]
}

// xrayCauseLimit bounds the cause of the answer to inv. The Runtime API
// refuses a header over 1 MiB + 4 KiB whole (431), and the invocation is
// left unanswered. So the cause gets 1 MiB, less what long request and
// invocation IDs take of the 4 KiB beyond it (TestXRayCauseLongIDs).
func xrayCauseLimit(inv *rapi.Invocation) int {
	// The rest of the header: request line, Host, User-Agent, the error
	// type (at most maxErrorTypeHeader), Content-Type, Content-Length.
	const rest = 1 << 10
	over := len(inv.RequestID) + len(inv.InvocationID) + rest - 4<<10
	return maxXRayCause - max(over, 0)
}
