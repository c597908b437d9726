package admin_test

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// parallelDefault is how many of this package's parallel tests run at
// once unless -parallel says otherwise. They wait on admins, executors,
// timers and a browser far more than they compute: at go test's default
// (GOMAXPROCS, 2 on a 2-core machine) the package took 38 s of wall time
// for 19 s of CPU, at 6 about 22 s.
const parallelDefault = 6

// TestMain runs the tests with -parallel parallelDefault unless the
// command line gives -parallel, and ends the Chromium the browser tests
// share.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelDefault)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	stopChromium()
	os.Exit(code)
}
