package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
)

// The scheduler's share of a runtime's CPU (-profile). Below saturation a
// goroutine hand-off readies a goroutine, the Go scheduler wakes an idle P
// to run it (runtime.startm) and, finding nothing, puts it back to sleep
// (runtime.stopm). perf record samples the runtime's process from outside
// while the measured load runs, kernel stacks included, so the wake and
// sleep of the thread under those two functions count in their share. The
// profile is taken in one more run per profiled runtime after the measured
// ones: perf costs CPU on the same machine, and its run's other figures
// are not in the medians.
const (
	mStartm = "startm_pct"       // samples under runtime.startm, % of the runtime's CPU samples
	mStopm  = "stopm_pct"        // under runtime.stopm
	mSched  = "startm_stopm_pct" // under either
	mPerfN  = "perf_samples"     // samples of the profile
)

// profileMetric says whether key is a figure of the profiled run only.
func profileMetric(key string) bool {
	switch key {
	case mStartm, mStopm, mSched, mPerfN:
		return true
	}
	return false
}

// perfHz is the sampling rate: at 0.2 CPU (tiny at 1000/s) a 10 s window
// gives about 4000 samples, a share read to about a per cent.
const perfHz = 1999

// profiled says whether runs of rt in sc are profiled: the open model
// (below saturation), lmigo's runtimes and the floor, when -profile
// allows.
func (c *config) profiled(sc scenario, rt runtimeSpec) bool {
	return c.Profile != "off" && c.Target != targetLambda && sc.Model == modelOpen &&
		(strings.HasPrefix(rt.Name, rtLmigo) || rt.Name == rtFloor) && rt.serves(sc.w)
}

// perfAvailable says why perf cannot profile here, or nil.
func perfAvailable() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf not found (Debian: apt-get install linux-perf)")
	}
	return nil
}

// perfRecording is perf record attached to one process.
type perfRecording struct {
	cmd      *exec.Cmd
	dir      string
	out      bytes.Buffer
	exited   chan struct{}
	ctl, ack *os.File // perf's control FIFOs
}

// perfWait bounds each wait for perf: far more than it needs.
const perfWait = time.Minute

// startPerf attaches perf record to pid: CPU-clock samples with their call
// chains, user and kernel, into a temporary file. It returns once perf
// records: perf starts with its events off and turns them on when told
// through its control FIFO, and says when it has.
func startPerf(pid int) (*perfRecording, error) {
	dir, err := os.MkdirTemp("", "lmigo-perf-")
	if err != nil {
		return nil, err
	}
	p := &perfRecording{dir: dir, exited: make(chan struct{})}
	ctl, ack := filepath.Join(dir, "ctl"), filepath.Join(dir, "ack")
	for _, f := range []string{ctl, ack} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("perf control: %w", err)
		}
	}
	// Both ends open read-write, so that neither open waits for perf.
	if p.ctl, err = os.OpenFile(ctl, os.O_RDWR, 0); err == nil {
		p.ack, err = os.OpenFile(ack, os.O_RDWR, 0)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("perf control: %w", err)
	}
	// No build-ID cache: it would copy every bootstrap into ~/.debug.
	p.cmd = exec.Command("perf", "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-F", strconv.Itoa(perfHz),
		"-g", "-D", "-1", "--control", "fifo:"+ctl+","+ack, "-p", strconv.Itoa(pid), "-o", filepath.Join(dir, "perf.data"))
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		p.close()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	if err := p.control("enable"); err != nil {
		p.stop()
		p.close()
		return nil, err
	}
	return p, nil
}

// control sends perf a command and waits for its acknowledgement.
func (p *perfRecording) control(cmd string) error {
	if _, err := p.ctl.Write([]byte(cmd + "\n")); err != nil {
		return fmt.Errorf("perf control: %w", err)
	}
	got := make(chan error, 1)
	go func() {
		_ = p.ack.SetReadDeadline(time.Now().Add(perfWait))
		buf := make([]byte, 16)
		n, err := p.ack.Read(buf)
		if err == nil && !bytes.HasPrefix(buf[:n], []byte("ack")) {
			err = fmt.Errorf("%q", buf[:n])
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			return fmt.Errorf("perf %s: no acknowledgement: %w", cmd, err)
		}
		return nil
	case <-p.exited:
		return fmt.Errorf("perf record ended (%v): %s", p.cmd.ProcessState, show.Abbreviate(p.out.Bytes(), 300))
	}
}

// stop ends perf record: SIGINT, as perf expects, and a kill if it does
// not end.
func (p *perfRecording) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(perfWait):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// close removes what startPerf made.
func (p *perfRecording) close() {
	for _, f := range []*os.File{p.ctl, p.ack} {
		if f != nil {
			_ = f.Close()
		}
	}
	_ = os.RemoveAll(p.dir)
}

// finish ends the recording and reads the scheduler's share from it.
func (p *perfRecording) finish(ctx context.Context) (perfShare, error) {
	defer p.close()
	p.stop()
	script := exec.CommandContext(ctx, "perf", "script", "-i", filepath.Join(p.dir, "perf.data"), "-F", "period,ip,sym")
	var stderr bytes.Buffer
	script.Stderr = &stderr
	stdout, err := script.StdoutPipe()
	if err != nil {
		return perfShare{}, err
	}
	if err := script.Start(); err != nil {
		return perfShare{}, fmt.Errorf("perf script: %w", err)
	}
	share, perr := parsePerfScript(stdout)
	_, _ = io.Copy(io.Discard, stdout)
	if err := script.Wait(); err != nil {
		return perfShare{}, fmt.Errorf("perf script: %w: %s %s", err, show.Abbreviate(stderr.Bytes(), 300), show.Abbreviate(p.out.Bytes(), 300))
	}
	return share, perr
}

// perfShare is the scheduler's share of a profile, in per cent of its
// samples weighted by their period.
type perfShare struct {
	Samples              int
	Startm, Stopm, Sched float64
}

// parsePerfScript reads `perf script -F period,ip,sym`: per sample a line
// with its period, then one line per frame (a tab, the address, the
// symbol), innermost first, then a blank line.
func parsePerfScript(r io.Reader) (perfShare, error) {
	var (
		share                        perfShare
		total, startm, stopm, either float64
		period                       float64
		inStartm, inStopm, symbols   bool
		open                         bool
	)
	flush := func() {
		if !open {
			return
		}
		share.Samples++
		total += period
		if inStartm {
			startm += period
		}
		if inStopm {
			stopm += period
		}
		if inStartm || inStopm {
			either += period
		}
		open, inStartm, inStopm = false, false, false
	}
	frame := func(fields []string) {
		if len(fields) < 2 {
			return
		}
		switch sym := fields[1]; {
		case sym == "runtime.startm":
			inStartm = true
		case sym == "runtime.stopm":
			inStopm = true
		case strings.HasPrefix(sym, "runtime."):
			symbols = true
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			frame(strings.Fields(line))
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			flush()
			continue
		}
		flush()
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return perfShare{}, fmt.Errorf("perf script: a sample without its period: %q", show.Abbreviate([]byte(line), 80))
		}
		period, open = v, true
		frame(fields[1:]) // a sample without a call chain has its frame here
	}
	flush()
	if err := sc.Err(); err != nil {
		return perfShare{}, fmt.Errorf("perf script: %w", err)
	}
	switch {
	case share.Samples == 0 || total == 0:
		return perfShare{}, errors.New("perf recorded no samples of the runtime")
	case !symbols && startm+stopm == 0:
		return perfShare{}, errors.New("perf found no Go symbols: the runtime's binary has no symbol table (built with -ldflags=-s?)")
	}
	share.Startm, share.Stopm, share.Sched = 100*startm/total, 100*stopm/total, 100*either/total
	return share, nil
}
