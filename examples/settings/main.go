// Command settings answers with a setting read from a parameter store and
// kept for a minute: the cache of docs/lmi.md. At N > 1 every invocation
// in flight shares the cache, so it is refreshed without a lock held
// across the call: the invocation that finds the value expired fetches it
// again, and the others answer with the value they have meanwhile. Held
// across the call, a lock would stall every invocation in flight for the
// length of each refresh (cache_test.go measures both).
//
// The store is an HTTP endpoint, SETTINGS_URL, that answers the setting's
// value as its body. The cache is filled in main, before Start: a store
// that cannot be read fails init, and no invocation waits for the first
// fetch.
//
// The move from aws-lambda-go is the one line in main.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	client := &http.Client{Timeout: 5 * time.Second} // built once, shared
	fetch := fetchFrom(client, os.Getenv("SETTINGS_URL"))
	c, err := newCache(context.Background(), fetch, time.Minute)
	if err != nil {
		// Before Start no invocation is in flight: exiting ends init alone.
		log.Fatalf("settings: %v", err)
	}
	// lambda.Start(handler(c))
	concurrent.Start(handler(c))
}

type answer struct {
	Value string `json:"value"`
}

// handler answers every event with the cached setting.
func handler(c *cache) func(context.Context) (answer, error) {
	return func(ctx context.Context) (answer, error) {
		return answer{Value: c.get(ctx)}, nil
	}
}

// maxValue bounds what is read of the store's answer.
const maxValue = 4 << 10

var errStore = errors.New("settings store")

// fetchFrom reads the setting from url with client.
func fetchFrom(client *http.Client, url string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return "", fmt.Errorf("%w: %w", errStore, err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("%w: %w", errStore, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxValue))
		if err != nil {
			return "", fmt.Errorf("%w: %w", errStore, err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%w: %s answered %s", errStore, url, resp.Status)
		}
		return strings.TrimSpace(string(body)), nil
	}
}
