package concurrent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lmigo/lmigo/limits"
	"github.com/lmigo/lmigo/rapi"
	"go.uber.org/zap"
)

// Start runs handler until the process is told to stop, and never returns.
// It is the drop-in replacement of aws-lambda-go's lambda.Start.
//
// A configuration or handler error is posted to /runtime/init/error,
// logged, and ends the process with status 1. SIGTERM and SIGINT start a
// graceful shutdown ending with status 0. A broken Runtime API ends the
// process with status 1.
func Start(handler any, opts ...Option) {
	code := start(handler, opts...)
	newOptions(opts).exit(code)
}

func start(handler any, opts ...Option) int {
	rt, err := New(handler, opts...)
	if err != nil {
		reportInitError(err, opts)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := rt.Run(ctx); err != nil {
		return 1
	}
	return 0
}

// initErrorType names what went wrong at init for the Runtime API.
func initErrorType(err error) string {
	switch {
	case errors.Is(err, ErrConfig):
		return errTypeInvalidConfiguration
	case errors.Is(err, ErrInvalidHandler):
		return errTypeInvalidHandler
	}
	return errTypeInitError
}

// reportInitError logs err and posts it to /runtime/init/error when the
// Runtime API address is known.
func reportInitError(err error, opts []Option) {
	o := newOptions(opts)
	log := o.logger
	if log == nil {
		log = newLogger(envLogFormat(o.lookup), limits.LevelInfo, o.stderr)
	}
	errorType := initErrorType(err)
	log.Error("init failed", zap.String("errorType", errorType), zap.Error(err))
	defer func() { _ = log.Sync() }()

	addr, ok := o.lookup("AWS_LAMBDA_RUNTIME_API")
	if !ok || addr == "" {
		return
	}
	client, cerr := rapi.New(addr)
	if cerr != nil {
		log.Error("cannot report init error", zap.Error(cerr))
		return
	}
	body, _ := json.Marshal(struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}{err.Error(), errorType})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if perr := client.InitError(ctx, errorType, body); perr != nil {
		log.Error("cannot report init error", zap.Error(perr))
	}
}
