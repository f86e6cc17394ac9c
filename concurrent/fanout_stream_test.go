package concurrent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// TestFanOutFailsStream: work a streaming handler started, still running
// when its handler returned the reader, that panics or fails is waited for
// when the reader ends, and its failure goes in the stream's error
// trailers after the bytes streamed so far, as a reader's own failure
// does; a stream whose work succeeds ends as it was.
func TestFanOutFailsStream(t *testing.T) {
	for _, form := range []string{"reader", "writerto"} {
		t.Run(form, func(t *testing.T) {
			api := newAPI(t, rapitest.Options{MaxConcurrency: 2, Queue: true})
			serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "2"}, func(ctx context.Context, ev struct{ Do string }) (io.Reader, error) {
				release := make(chan struct{})
				if err := Go(ctx, func(context.Context) error {
					<-release // after the handler returned
					switch ev.Do {
					case "panic":
						panic(fanoutPanic{7})
					case "fail":
						return fmt.Errorf("work failed")
					}
					return nil
				}); err != nil {
					return nil, err
				}
				close(release)
				body := bytes.NewReader([]byte("streamed " + ev.Do))
				if form == "writerto" {
					return body, nil
				}
				return onlyReader{body}, nil
			})
			for _, tc := range []struct{ do, errType, msg string }{
				{"panic", "fanoutPanic", "{7}"},
				{"fail", "errorString", "work failed"},
				{"ok", "", ""},
			} {
				r := invoke(t, api, fmt.Sprintf(`{"Do":%q}`, tc.do))
				if !strings.HasPrefix(string(r.Body), "streamed "+tc.do) {
					t.Errorf("%s: body %q", tc.do, r.Body)
				}
				switch {
				case tc.errType == "" && r.Err != nil:
					t.Errorf("%s: %v, want no error", tc.do, r.Err)
				case tc.errType != "" && (r.Err == nil || r.Err.Type != tc.errType || !strings.Contains(string(r.Err.Body), tc.msg)):
					t.Errorf("%s: %+v, want %s with %q in the trailers", tc.do, r.Err, tc.errType, tc.msg)
				}
			}
		})
	}
}

// onlyReader hides its reader's WriteTo.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
