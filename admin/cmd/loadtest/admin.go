package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// adminProc is a carillon admin started as a child process.
type adminProc struct {
	cmd     *exec.Cmd
	url     string
	addr    string // host:port of url
	logPath string
	exited  chan struct{} // closed when the process has exited
	err     error         // Wait's error, once exited is closed
}

// buildCarillon builds the carillon binary into dir; it needs the current
// directory to be inside the Carillon module.
func buildCarillon(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "carillon")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/carillonhq/carillon/admin/cmd/carillon") //nolint:gosec // the load tool starts the binary and perf the operator named
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build carillon (run from the repository, or pass --carillon): %w\n%s", err, out)
	}
	return bin, nil
}

// startAdmin starts "<bin> <command>" (carillon serve) on addr (a free
// loopback port when empty) with the executor token and, through the
// environment (so it stays out of ps), the first ADMIN's password; its
// output is appended to log in dir.
func startAdmin(bin, command, addr, dir, log, dbPath, token, password, logLevel string, extra, env []string) (*adminProc, error) {
	if addr == "" {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	args := append([]string{command, "--listen", addr, "--db", dbPath, "--token", token, "--log-level", logLevel}, extra...)
	logPath := filepath.Join(dir, log)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600) //nolint:gosec // a log in the load tool's work directory
	if err != nil {
		return nil, fmt.Errorf("admin log: %w", err)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // the load tool starts the binary and perf the operator named
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(append(os.Environ(), env...), "CARILLON_ADMIN_PASSWORD="+password)
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start admin: %w", err)
	}
	a := &adminProc{cmd: cmd, url: "http://" + addr, addr: addr, logPath: logPath, exited: make(chan struct{})}
	go func() {
		a.err = cmd.Wait()
		_ = logFile.Close()
		close(a.exited)
	}()
	return a, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// pid is the admin's process id.
func (a *adminProc) pid() int { return a.cmd.Process.Pid }

// waitReady waits until the admin answers HTTP, the process exits, or
// timeout passes.
func (a *adminProc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.url+"/grpc.health.v1.Health/Check", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			return nil
		}
		select {
		case <-a.exited:
			return fmt.Errorf("admin exited before serving (%v); its log: %s\n%s", a.err, a.logPath, tail(a.logPath, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("admin not serving after %s; its log: %s", timeout, a.logPath)
		}
	}
}

// stop asks the admin to shut down (SIGTERM) and kills it if it has not
// exited within timeout. An admin that had exited already, before it was
// asked (over PostgreSQL, one whose lease ran out), is an error naming the
// last line of its log: the report's admin CPU is then unknown (-1).
func (a *adminProc) stop(timeout time.Duration) error {
	select {
	case <-a.exited:
		return fmt.Errorf("admin %s exited before the stop (%v): %s", a.addr, a.err, tail(a.logPath, 1))
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
		return nil
	case <-time.After(timeout):
		_ = a.cmd.Process.Kill()
		<-a.exited
		return errors.New("admin did not stop within " + timeout.String() + ": killed")
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
