package bench

import (
	"os"
	"runtime"
	"strings"
)

// Host describes the machine the figures come from.
type Host struct {
	CPUModel  string `json:"cpuModel"`
	CPUs      int    `json:"cpus"`
	Arch      string `json:"arch"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
}

func host() Host {
	h := Host{CPUs: runtime.NumCPU(), Arch: runtime.GOARCH, GoVersion: runtime.Version(), CPUModel: "unknown CPU"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			k, v, ok := strings.Cut(line, ":")
			k = strings.TrimSpace(k)
			// x86 says "model name"; arm64 kernels often only "CPU part".
			if ok && (k == "model name" || k == "Model") {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
			if ok && k == "CPU part" && h.CPUModel == "unknown CPU" {
				h.CPUModel = armPart(strings.TrimSpace(v))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// armPart names the Arm cores of Graviton instances.
func armPart(part string) string {
	switch part {
	case "0xd0c":
		return "Arm Neoverse-N1 (Graviton2)"
	case "0xd40":
		return "Arm Neoverse-V1 (Graviton3)"
	case "0xd4f":
		return "Arm Neoverse-V2 (Graviton4)"
	}
	return "Arm CPU part " + part
}
