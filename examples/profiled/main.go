// Command profiled is a function that profiles itself: with CPU_PROFILE
// set to a path, it writes a CPU profile of its whole life there, from
// start to shutdown. lmigo runs each invocation under the profiler labels
// requestId and function, so the profile splits by invocation
// (docs/observability.md has the walk-through).
//
// An event {"rounds":R} costs R rounds of hashing, half of them on a
// goroutine the handler starts with concurrent.Go, which inherits the
// labels:
//
//	{"rounds":40}  200 {"rounds":40,"sum":"4c0f..."}
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/lmigo/lmigo/concurrent"
)

func main() {
	var opts []concurrent.Option
	if path := os.Getenv("CPU_PROFILE"); path != "" {
		stop, err := startProfile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profiled:", err)
			os.Exit(1)
		}
		// Lambda sends SIGTERM only to a runtime with an extension:
		// WithSIGTERM registers one, and runs stop at shutdown.
		opts = append(opts, concurrent.WithSIGTERM(stop))
	}
	concurrent.Start(handle, opts...)
}

// startProfile starts a CPU profile into path; stop writes it out.
func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

type job struct {
	Rounds int `json:"rounds"`
}

type digest struct {
	Rounds int    `json:"rounds"`
	Sum    string `json:"sum"`
}

// maxRounds bounds what one event may cost.
const maxRounds = 1000

func handle(ctx context.Context, j job) (digest, error) {
	if j.Rounds < 0 || j.Rounds > maxRounds {
		return digest{}, fmt.Errorf("rounds %d: want 0..%d", j.Rounds, maxRounds)
	}
	var half [sha256.Size]byte
	if err := concurrent.Go(ctx, func(context.Context) error {
		half = hash(j.Rounds / 2)
		return nil
	}); err != nil {
		return digest{}, err
	}
	other := hash(j.Rounds - j.Rounds/2)
	if err := concurrent.Wait(ctx); err != nil {
		return digest{}, err
	}
	sum := sha256.Sum256(append(half[:], other[:]...))
	return digest{Rounds: j.Rounds, Sum: hex.EncodeToString(sum[:])}, nil
}

// hash hashes 64 KiB rounds times over.
func hash(rounds int) [sha256.Size]byte {
	buf := make([]byte, 64<<10)
	var sum [sha256.Size]byte
	for range rounds {
		sum = sha256.Sum256(buf)
		copy(buf, sum[:])
	}
	return sum
}
