package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// procEnv is what a command reads of its process besides its streams: the
// environment variables and the working directory. Its zero value is the
// process's own (main's); the tests give each command line its own, so
// that many run side by side in one test process.
type procEnv struct {
	// lookupEnv reads an environment variable; nil: os.LookupEnv.
	lookupEnv func(name string) (string, bool)
	// dir is the directory relative file names are in; "": the process's
	// working directory.
	dir string
}

// lookup returns the environment variable name and whether it is set.
func (p procEnv) lookup(name string) (string, bool) {
	if p.lookupEnv == nil {
		return os.LookupEnv(name)
	}
	return p.lookupEnv(name)
}

// getenv returns the environment variable name, "" when it is not set.
func (p procEnv) getenv(name string) string {
	v, _ := p.lookup(name)
	return v
}

// path returns the file name name as the process opens it: relative to
// dir when dir is set and name is relative, else name itself.
func (p procEnv) path(name string) string {
	if p.dir == "" || name == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(p.dir, name)
}

// userConfigDir is os.UserConfigDir of the environment lookupEnv reads.
func (p procEnv) userConfigDir() (string, error) {
	if p.lookupEnv == nil {
		return os.UserConfigDir()
	}
	// As os.UserConfigDir, which reads the process's environment only.
	switch runtime.GOOS {
	case "windows":
		if dir := p.getenv("AppData"); dir != "" {
			return dir, nil
		}
		return "", errors.New("%AppData% is not defined")
	case "darwin", "ios":
		if dir := p.getenv("HOME"); dir != "" {
			return dir + "/Library/Application Support", nil
		}
		return "", errors.New("$HOME is not defined")
	}
	dir := p.getenv("XDG_CONFIG_HOME")
	switch {
	case dir != "" && !filepath.IsAbs(dir):
		return "", errors.New("path in $XDG_CONFIG_HOME is relative")
	case dir != "":
		return dir, nil
	case p.getenv("HOME") != "":
		return p.getenv("HOME") + "/.config", nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME are defined")
}
