package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// layer settles every option of serve in one pass: its flag, else its
// environment variable, else the config file, else its default, and
// records where each value came from. Values from the environment and the
// file are parsed by the flag's own type, so a bad one is refused naming
// where it was.
func (o *serveOptions) layer() error {
	if !o.flags.Changed("config-file") {
		o.file = o.proc.getenv("CARILLON_CONFIG_FILE")
	}
	file, err := o.readFile()
	if err != nil {
		return err
	}
	o.sources = map[string]string{}
	var errs []string
	o.each(func(f *pflag.Flag) {
		env := o.envs[f.Name]
		ev, inEnv := o.proc.lookup(env)
		fv, inFile := file[f.Name]
		switch {
		case f.Changed:
			o.sources[f.Name] = "flag --" + f.Name
		case inEnv && ev != "":
			if err := f.Value.Set(ev); err != nil {
				errs = append(errs, fmt.Sprintf("env %s: %v", env, err))
			}
			o.sources[f.Name] = "env " + env
		case inFile:
			if err := f.Value.Set(fv); err != nil {
				errs = append(errs, fmt.Sprintf("%s:%d: %s: %v", o.file, o.fileLines[f.Name], f.Name, err))
			}
			o.sources[f.Name] = fmt.Sprintf("file %s:%d", o.file, o.fileLines[f.Name])
		default:
			o.sources[f.Name] = "default"
		}
	})
	if len(errs) > 0 {
		return usagef("serve: %s", strings.Join(errs, "; "))
	}
	if o.cfg.Demo && o.sources["db"] == "default" {
		o.cfg.DBPath = demoDBPath // keep the demo's group and job out of the real database
		o.sources["db"] = "default with --demo"
	}
	return nil
}

// readFile reads the config file, if any: lines "name = value", blank
// lines and lines starting with # ignored, a value in double quotes
// unquoted as in Go. An unknown or repeated name is refused with its line.
func (o *serveOptions) readFile() (map[string]string, error) {
	if o.file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(o.proc.path(o.file))
	if err != nil {
		return nil, fmt.Errorf("serve: config file: %w", err)
	}
	known := map[string]bool{}
	o.each(func(fl *pflag.Flag) { known[fl.Name] = true })
	values := map[string]string{}
	o.fileLines = map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, usagef("%s:%d: want \"name = value\", got %q", o.file, n, line)
		case !known[name]:
			return nil, usagef("%s:%d: unknown option %q (carillon serve --print-config lists them)", o.file, n, name)
		case o.fileLines[name] > 0:
			return nil, usagef("%s:%d: %s is already set on line %d", o.file, n, name, o.fileLines[name])
		}
		if strings.HasPrefix(value, `"`) {
			uq, err := strconv.Unquote(value)
			if err != nil {
				return nil, usagef("%s:%d: %s: bad quoted value %s", o.file, n, name, value)
			}
			value = uq
		}
		values[name], o.fileLines[name] = value, n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("serve: config file %s: %w", cmp.Or(o.file, "?"), err)
	}
	return values, nil
}
