package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// cpuTime returns the user plus system CPU time of process pid so far,
// from /proc/<pid>/stat (pid 0 is this process).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: unexpected format", procPath(pid, "stat"))
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: unexpected format", procPath(pid, "stat"))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: unexpected format", procPath(pid, "stat"))
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// memory returns the resident set size now (VmRSS) and its peak (VmHWM) of
// process pid, in bytes, from /proc/<pid>/status.
func memory(pid int) (rss, peak int64, err error) {
	f, err := os.Open(procPath(pid, "status"))
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", procPath(pid, "status"), name, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

func procPath(pid int, name string) string {
	if pid == 0 {
		return "/proc/self/" + name
	}
	return fmt.Sprintf("/proc/%d/%s", pid, name)
}

// sample is one reading of a process's CPU time, taken at a wall time.
type sample struct {
	at  time.Time
	cpu time.Duration
	ok  bool
}

func takeSample(pid int) sample {
	cpu, err := cpuTime(pid)
	return sample{at: time.Now(), cpu: cpu, ok: err == nil}
}

// takeSamples sums the CPU time of several processes; it fails when any
// reading does (a process that died meanwhile).
func takeSamples(pids []int) sample {
	s := sample{ok: true}
	for _, pid := range pids {
		x := takeSample(pid)
		s.at, s.cpu, s.ok = x.at, s.cpu+x.cpu, s.ok && x.ok
	}
	return s
}

// takeEach reads the CPU time of each process.
func takeEach(pids []int) []sample {
	out := make([]sample, len(pids))
	for i, pid := range pids {
		out[i] = takeSample(pid)
	}
	return out
}

// cpuEach is cpuPercent of each process between its readings a[i] and
// b[i]; nil for one process, whose figure is the sum's.
func cpuEach(a, b []sample) []float64 {
	if len(a) < 2 || len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = round(cpuPercent(a[i], b[i]))
	}
	return out
}

// cpuPercent is the CPU used between a and b in percent of one core; -1
// when either reading failed.
func cpuPercent(a, b sample) float64 {
	if !a.ok || !b.ok || !b.at.After(a.at) {
		return -1
	}
	return 100 * float64(b.cpu-a.cpu) / float64(b.at.Sub(a.at))
}

// machine describes this host: CPUs, CPU model.
func machine() (cpus int, model string) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0, ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(name) {
		case "processor":
			cpus++
		case "model name":
			model = strings.TrimSpace(value)
		}
	}
	return cpus, model
}
