package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The machine around the processes measured: the CPU time all of it
// spent, so that other work on it shows, and its memory.

// MachineBusy is the CPU time the whole machine has spent not idle, from
// /proc/stat (0 when unreadable).
func MachineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return parseBusy(b)
}

// parseBusy reads the busy time of the first line of /proc/stat: every
// field but idle and iowait, and but steal and guest, which are not the
// machine's own work (0 when it does not parse).
func parseBusy(b []byte) time.Duration {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i == 3 || i == 4 || i >= 7 { // idle, iowait; steal and guest are not ours
			continue
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTicks
}

// MemAvailableMiB is the machine's MemAvailable.
func MemAvailableMiB() (float64, error) {
	kb, err := meminfo("MemAvailable")
	return kb / 1024, err
}

// MemTotalMB is the machine's MemTotal in MB, as Lambda counts memory.
func MemTotalMB() (int, error) {
	kb, err := meminfo("MemTotal")
	return int(kb / 1024), err
}

// meminfo is the figure of /proc/meminfo named key, in kB.
func meminfo(key string) (float64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMeminfo(b, key)
}

// parseMeminfo is the figure named key of the text of /proc/meminfo, in kB.
func parseMeminfo(b []byte, key string) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/meminfo", key)
}
