package concurrent

import (
	"context"
	"errors"
	"os"
	"strconv"

	"go.uber.org/zap"

	"github.com/lmigo/lmigo/rapi"
)

// experiment sets up s for the issue #9 throttle study (LMIGO_EXP_POLL):
// "second" sends the next /next on a second connection of the slot right
// after the answer is written; "defer" reads the answer's status only with
// the next invocation (LMIGO_EXP_LOWAT: SO_RCVLOWAT in bytes).
func (rt *Runtime) experiment(s *slot) {
	s.pollConn = s.conn
	switch os.Getenv("LMIGO_EXP_POLL") {
	case "second":
		s.pollConn = rt.client.Conn()
		s.conn.AfterWrite(func() {
			if s.wantPoll && s.pollConn.SendNext(context.Background()) == nil {
				s.pollQueued = true
			}
		})
	case "defer":
		lowat, _ := strconv.Atoi(os.Getenv("LMIGO_EXP_LOWAT"))
		s.conn.DeferAnswer(func(err error) {
			switch {
			case err == nil:
			case errors.Is(err, rapi.ErrRuntimeAPI):
				rt.stop(err)
			default:
				rt.log.Warn("the Runtime API did not accept the answer", zap.Error(err))
			}
		}, lowat)
	}
}
