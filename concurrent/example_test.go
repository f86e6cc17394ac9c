package concurrent_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
)

type order struct {
	ID    string `json:"id"`
	Items int    `json:"items"`
}

type receipt struct {
	OrderID   string `json:"orderId"`
	RequestID string `json:"requestId"`
}

// A typed handler, as written for aws-lambda-go: only the Start call changes.
func ExampleStart() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		return receipt{OrderID: o.ID, RequestID: lc.AwsRequestID}, nil
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		concurrent.Start(handle) // never returns
	}
}

// A raw handler reads the payload bytes and appends its response to the
// slot's buffer: no reflection, no extra copy.
func ExampleRawHandler() {
	h := concurrent.RawHandler(func(_ context.Context, payload []byte, out *concurrent.Buffer) error {
		_, _ = out.WriteString(`{"length":`)
		out.B = fmt.Appendf(out.B, "%d}", len(payload))
		return nil
	})
	_ = h
}

// Programs that own main build the runtime with New and stop it by
// cancelling the context given to Run.
func ExampleRuntime_Run() {
	rt, err := concurrent.New(func(ctx context.Context) error {
		concurrent.Logger(ctx).Info("invoked") // carries this invocation's requestId
		return nil
	})
	if err != nil {
		fmt.Println(err) // names every bad variable, e.g. a missing AWS_LAMBDA_RUNTIME_API
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	_ = rt.Run(ctx)
}
