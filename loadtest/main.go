// Command loadtest drives bootstrap binaries against the fake LMI Runtime
// API and reports what happened.
//
//	go run ./loadtest run [flags]   build the reference bootstrap, serve it, send a short load, report
//
// Every run is bounded in invocations and in time and stops by itself; all
// traffic stays on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "run":
		err = runDemo(ctx, os.Args[2:])
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: loadtest run [flags]
  run   build cmd/bootstrap, serve it from the fake Runtime API, send a short concurrent load, report
Run "loadtest run -h" for the flags.`)
}

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("loadtest "+name, flag.ExitOnError)
}
