package concurrent_test

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

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
