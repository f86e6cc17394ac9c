package concurrent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
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

// A handler fans out with Go and collects with Wait. Under the runtime
// each function runs on its own goroutine and a panic fails only its
// invocation; called with a plain context, as here, Go runs it at once.
func ExampleGo() {
	handler := func(ctx context.Context, ids []string) (string, error) {
		names := make([]string, len(ids))
		for i, id := range ids {
			if err := concurrent.Go(ctx, func(ctx context.Context) error {
				names[i] = strings.ToUpper(id) // a lookup of id, say
				return nil
			}); err != nil {
				return "", err
			}
		}
		if err := concurrent.Wait(ctx); err != nil {
			return "", err
		}
		return strings.Join(names, ","), nil
	}
	fmt.Println(handler(context.Background(), []string{"a", "b"}))
	// Output: A,B <nil>
}

// Every line of an invocation's logger carries its requestId (and traceId,
// tenantId): on stderr, in Lambda's JSON shape, at AWS_LAMBDA_LOG_LEVEL.
func ExampleLogger() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		log := concurrent.Logger(ctx)
		log.Info("order received", zap.String("orderId", o.ID), zap.Int("items", o.Items))
		concurrent.Trace(log, "order detail", zap.Any("order", o)) // TRACE
		return receipt{OrderID: o.ID, RequestID: concurrent.RequestID(ctx)}, nil
	}
	_ = handle
}

// log/slog users install the handler once; the context passed to each
// call tells which invocation the line belongs to.
func ExampleSlogHandler() {
	slog.SetDefault(slog.New(concurrent.SlogHandler()))
	handle := func(ctx context.Context, o order) error {
		slog.InfoContext(ctx, "order received", "orderId", o.ID)
		concurrent.Slog(ctx).Warn("low stock", "items", o.Items) // bound: no context needed
		slog.Log(ctx, concurrent.SlogLevelTrace, "order detail", "order", o)
		return nil
	}
	_ = handle
}

// The trace header is per invocation: pass it on to outgoing requests
// yourself (X-Amzn-Trace-Id), since _X_AMZN_TRACE_ID is not set on Lambda
// Managed Instances.
func ExampleTraceID() {
	handle := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.com/", nil)
		if err != nil {
			return err
		}
		if h := concurrent.TraceID(ctx); h != "" {
			req.Header.Set("X-Amzn-Trace-Id", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	_ = handle
}

// A function started with aws-lambda-go's options moves with them as they
// are: only the Start call changes.
func ExampleStartWithOptions() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID}, nil
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		// lambda.StartWithOptions(handle, ...)
		concurrent.StartWithOptions(handle,
			lambda.WithSetIndent("", "  "),
			lambda.WithEnableSIGTERM(func() { fmt.Println("flushing") }),
		) // never returns
	}
}

// The compiler checks the handler's signature, as for
// lambda.StartHandlerFunc.
func ExampleStartHandlerFunc() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID}, nil
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		concurrent.StartHandlerFunc(handle, lambda.WithUseNumber(true)) // never returns
	}
}

// A handler tags its work with the Availability Zone it runs in. Outside
// Lambda, as here, there is no metadata endpoint.
func ExampleAvailabilityZoneID() {
	handler := func(ctx context.Context, _ any) (string, error) {
		zone, err := concurrent.AvailabilityZoneID(ctx)
		switch {
		case errors.Is(err, concurrent.ErrNoMetadata):
			return "no zone outside Lambda", nil
		case err != nil:
			return "", err // the endpoint failed: ErrMetadata
		}
		return "served in " + zone, nil
	}
	answer, _ := handler(context.Background(), nil)
	fmt.Println(answer)
	// Output: no zone outside Lambda
}
