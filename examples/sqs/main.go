// Command sqs is an Amazon SQS batch handler served by lmigo that reports
// partial batch failures: a message that cannot be processed is named in
// the events.SQSEventResponse, so SQS delivers only it again, not the whole
// batch. The event source mapping must list ReportBatchItemFailures in its
// FunctionResponseTypes, or Lambda ignores the response.
//
// A message body is an order, {"orderId":"o-1","sku":"GOPHER-PLUSH","quantity":2}.
// Malformed JSON, or an order without an ID, SKU or a positive quantity, is
// a failure. SQS delivers at least once, so an order already taken is
// skipped, not taken twice.
//
// For a FIFO queue, a handler should stop at the first failure and report
// it and every message after it, to keep the group's order.
//
// The move from aws-lambda-go is the one line in main. Batches are handled
// concurrently (up to AWS_LAMBDA_MAX_CONCURRENCY at once), so the record
// of orders taken is safe for concurrent use.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lmigo/lmigo/concurrent"
	"go.uber.org/zap"
)

func main() {
	// lambda.Start(handle)
	concurrent.Start(handle)
}

type order struct {
	ID       string `json:"orderId"`
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

var errInvalid = errors.New("invalid order")

// taken holds the IDs of the orders this execution environment has taken;
// a real function would use a conditional write to a table.
var taken sync.Map

func handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	log := concurrent.Logger(ctx)
	// An empty list, not null: nothing to redeliver.
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range ev.Records {
		if err := process(m); err != nil {
			log.Warn("message failed", zap.String("messageId", m.MessageId), zap.Error(err))
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	log.Info("batch done", zap.Int("messages", len(ev.Records)), zap.Int("failed", len(resp.BatchItemFailures)))
	return resp, nil
}

func process(m events.SQSMessage) error {
	var o order
	if err := json.Unmarshal([]byte(m.Body), &o); err != nil {
		return fmt.Errorf("%w: %w", errInvalid, err)
	}
	if o.ID == "" || o.SKU == "" || o.Quantity <= 0 {
		return fmt.Errorf("%w: %+v", errInvalid, o)
	}
	// An order delivered again is already taken: nothing more to do.
	taken.LoadOrStore(o.ID, o)
	return nil
}
