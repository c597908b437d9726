package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"
)

// readSecrets reads n secrets: lines of stdin with --password-stdin, else
// prompts on the terminal without echo.
func (e *cmdEnv) readSecrets(fromStdin bool, prompts ...string) ([]string, error) {
	var out []string
	if fromStdin {
		sc := bufio.NewScanner(e.io.in)
		for range prompts {
			if !sc.Scan() {
				return nil, usagef("--password-stdin: want %d line(s) on stdin", len(prompts))
			}
			out = append(out, strings.TrimRight(sc.Text(), "\r"))
		}
		return out, nil
	}
	f, ok := e.io.in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) { //nolint:gosec // a file descriptor fits an int
		return nil, usagef("no terminal to ask for the password on: pass it with --password-stdin")
	}
	for _, p := range prompts {
		fmt.Fprint(e.io.err, p)
		b, err := term.ReadPassword(int(f.Fd())) //nolint:gosec // a file descriptor fits an int
		fmt.Fprintln(e.io.err)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}
