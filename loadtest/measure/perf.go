package measure

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

// The scheduler's share of a process's CPU. Below saturation a goroutine
// hand-off readies a goroutine, the Go scheduler wakes an idle P to run
// it (runtime.startm) and, finding nothing, puts it back to sleep
// (runtime.stopm). perf record samples the process from outside, kernel
// stacks included, so the wake and sleep of the thread under those two
// functions count in their share.

// PerfHz is the sampling rate: at 0.2 CPU (tiny at 1000/s) a 10 s window
// gives about 4000 samples, a share read to about a per cent.
const PerfHz = 1999

// PerfAvailable says why perf cannot profile here, or nil.
func PerfAvailable() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf not found (Debian: apt-get install linux-perf)")
	}
	return nil
}

// Perf is perf record attached to one process.
type Perf struct {
	cmd      *exec.Cmd
	dir      string
	out      bytes.Buffer
	exited   chan struct{}
	ctl, ack *os.File // perf's control FIFOs
}

// perfWait bounds each wait for perf: far more than it needs.
const perfWait = time.Minute

// StartPerf attaches perf record to pid: CPU-clock samples with their call
// chains, user and kernel, into a temporary file. It returns once perf
// records: perf starts with its events off and turns them on when told
// through its control FIFO, and says when it has.
func StartPerf(pid int) (*Perf, error) {
	dir, err := os.MkdirTemp("", "lmigo-perf-")
	if err != nil {
		return nil, err
	}
	p := &Perf{dir: dir, exited: make(chan struct{})}
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
	p.cmd = exec.Command("perf", "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-F", strconv.Itoa(PerfHz),
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

// Disable turns perf's events off: what it recorded until then is the
// profile that Finish reads.
func (p *Perf) Disable() error { return p.control("disable") }

// control sends perf a command and waits for its acknowledgement.
func (p *Perf) control(cmd string) error {
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
func (p *Perf) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(perfWait):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// close removes what StartPerf made.
func (p *Perf) close() {
	for _, f := range []*os.File{p.ctl, p.ack} {
		if f != nil {
			_ = f.Close()
		}
	}
	_ = os.RemoveAll(p.dir)
}

// finish ends the recording and reads the scheduler's share from it.
func (p *Perf) Finish(ctx context.Context) (PerfShare, error) {
	defer p.close()
	p.stop()
	script := exec.CommandContext(ctx, "perf", "script", "-i", filepath.Join(p.dir, "perf.data"), "-F", "period,ip,sym")
	var stderr bytes.Buffer
	script.Stderr = &stderr
	stdout, err := script.StdoutPipe()
	if err != nil {
		return PerfShare{}, err
	}
	if err := script.Start(); err != nil {
		return PerfShare{}, fmt.Errorf("perf script: %w", err)
	}
	share, perr := parsePerfScript(stdout)
	_, _ = io.Copy(io.Discard, stdout)
	if err := script.Wait(); err != nil {
		return PerfShare{}, fmt.Errorf("perf script: %w: %s %s", err, show.Abbreviate(stderr.Bytes(), 300), show.Abbreviate(p.out.Bytes(), 300))
	}
	return share, perr
}

// PerfShare is the scheduler's share of a profile, in per cent of its
// samples weighted by their period.
type PerfShare struct {
	Samples              int
	Startm, Stopm, Sched float64
}

// parsePerfScript reads `perf script -F period,ip,sym`: per sample a line
// with its period, then one line per frame (a tab, the address, the
// symbol), innermost first, then a blank line.
func parsePerfScript(r io.Reader) (PerfShare, error) {
	var (
		share                        PerfShare
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
			return PerfShare{}, fmt.Errorf("perf script: a sample without its period: %q", show.Abbreviate([]byte(line), 80))
		}
		period, open = v, true
		frame(fields[1:]) // a sample without a call chain has its frame here
	}
	flush()
	if err := sc.Err(); err != nil {
		return PerfShare{}, fmt.Errorf("perf script: %w", err)
	}
	switch {
	case share.Samples == 0 || total == 0:
		return PerfShare{}, errors.New("perf recorded no samples of the runtime")
	case !symbols && startm+stopm == 0:
		return PerfShare{}, errors.New("perf found no Go symbols: the runtime's binary has no symbol table (built with -ldflags=-s?)")
	}
	share.Startm, share.Stopm, share.Sched = 100*startm/total, 100*stopm/total, 100*either/total
	return share, nil
}
