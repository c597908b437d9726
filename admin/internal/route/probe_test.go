package route_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

// executor is a stand-in executor on a loopback HTTP server, with a two-route protocol:
//
//	GET /beat                  200 when alive
//	GET /idle-beat?job_id=N    200 when idle for job N, else 409 with the reason as body
type executor struct {
	srv       *httptest.Server
	url       string
	beats     atomic.Int32 // requests answered on /beat
	idleBeats atomic.Int32 // requests answered on /idle-beat
	entered   chan struct{}

	mu   sync.Mutex
	busy map[int64]string // job ID -> reason
	sick bool             // answer 503
	hang bool             // hold every request until the client gives up
}

func newExecutor(t *testing.T) *executor {
	t.Helper()
	e := &executor{busy: map[int64]string{}, entered: make(chan struct{}, 16)}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	e.url = e.srv.URL
	t.Cleanup(e.srv.Close)
	return e
}

func (e *executor) serve(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	sick, hang := e.sick, e.hang
	e.mu.Unlock()
	if hang {
		e.entered <- struct{}{}
		<-r.Context().Done() // the client went away
		return
	}
	if sick {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/beat":
		e.beats.Add(1)
	case "/idle-beat":
		e.idleBeats.Add(1)
		job, err := strconv.ParseInt(r.URL.Query().Get("job_id"), 10, 64)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e.mu.Lock()
		reason, busy := e.busy[job]
		e.mu.Unlock()
		if busy {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, reason)
		}
	default:
		http.NotFound(w, r)
	}
}

// kill closes the server: later requests get "connection refused".
func (e *executor) kill() { e.srv.Close() }

func (e *executor) setBusy(job int64, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.busy[job] = reason
}

func (e *executor) setSick() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sick = true
}

func (e *executor) setHang() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hang = true
}

// newGroup starts n executors and returns them sorted by URL, as the admin lists them.
func newGroup(t *testing.T, n int) ([]*executor, []string) {
	t.Helper()
	group := make([]*executor, n)
	for i := range group {
		group[i] = newExecutor(t)
	}
	slices.SortFunc(group, func(a, b *executor) int { return strings.Compare(a.url, b.url) })
	addresses := make([]string, n)
	for i, e := range group {
		addresses[i] = e.url
	}
	return group, addresses
}

// httpProber is a route.Prober over the executor's plain HTTP protocol above.
type httpProber struct{ client *http.Client }

func (p httpProber) get(ctx context.Context, url string) (status int, body string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

func (p httpProber) Beat(ctx context.Context, address string) error {
	status, body, err := p.get(ctx, address+"/beat")
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("beat: %s: %s", http.StatusText(status), body)
	}
	return nil
}

func (p httpProber) IdleBeat(ctx context.Context, address string, jobID int64) (bool, string, error) {
	status, body, err := p.get(ctx, address+"/idle-beat?job_id="+strconv.FormatInt(jobID, 10))
	switch {
	case err != nil:
		return false, "", err
	case status == http.StatusOK:
		return true, "", nil
	case status == http.StatusConflict:
		return false, body, nil
	default:
		return false, "", fmt.Errorf("idle beat: %s: %s", http.StatusText(status), body)
	}
}

func newProber(t *testing.T) httpProber {
	t.Helper()
	transport := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(transport.CloseIdleConnections)
	return httpProber{client: &http.Client{Transport: transport}}
}

// header is the start of a Pick's Message over addresses.
func header(strategy string, addresses []string) string {
	return fmt.Sprintf("%s over %d executors (%s): ", strategy, len(addresses), strings.Join(addresses, ", "))
}

const refused = "connection refused"

func TestFailover(t *testing.T) {
	t.Parallel()

	t.Run("FirstAlive", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 3)
		p, err := route.Failover(newProber(t)).Pick(t.Context(), 1, addresses)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{addresses[0]}; !slices.Equal(p.Addresses, want) {
			t.Errorf("Addresses = %q, want %q", p.Addresses, want)
		}
		if want := header("FAILOVER", addresses) + "beat " + addresses[0] + ": OK; chose " + addresses[0]; p.Message() != want {
			t.Errorf("Message = %q, want %q", p.Message(), want)
		}
		if got := []int32{group[0].beats.Load(), group[1].beats.Load(), group[2].beats.Load()}; !slices.Equal(got, []int32{1, 0, 0}) {
			t.Errorf("beats per executor = %v, want [1 0 0]: one beat for a healthy group", got)
		}
	})

	t.Run("SkipsDeadAndSick", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 4)
		group[0].kill()
		group[1].setSick()
		p, err := route.Failover(newProber(t)).Pick(t.Context(), 1, addresses)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{addresses[2]}; !slices.Equal(p.Addresses, want) {
			t.Errorf("Addresses = %q, want %q", p.Addresses, want)
		}
		for _, want := range []string{
			header("FAILOVER", addresses) + "beat " + addresses[0] + ": Get ",
			refused + "; beat " + addresses[1] + ": beat: Service Unavailable: overloaded; beat " + addresses[2] + ": OK; chose " + addresses[2],
		} {
			if !strings.Contains(p.Message(), want) {
				t.Errorf("Message = %q, want it to contain %q", p.Message(), want)
			}
		}
		if n := group[3].beats.Load(); n != 0 {
			t.Errorf("the executor after the chosen one got %d beats, want 0", n)
		}
	})

	t.Run("AllDead", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 2)
		group[0].kill()
		group[1].kill()
		p, err := route.Failover(newProber(t)).Pick(t.Context(), 1, addresses)
		if !errors.Is(err, route.ErrNoExecutor) {
			t.Fatalf("err = %v, want ErrNoExecutor", err)
		}
		msg := err.Error()
		if want := "FAILOVER routing: every executor failed its beat: " + addresses[0] + ": "; !strings.HasPrefix(msg, want) {
			t.Errorf("err = %q, want it to start with %q", msg, want)
		}
		if !strings.Contains(msg, refused+"; "+addresses[1]+": ") || !strings.HasSuffix(msg, refused) {
			t.Errorf("err = %q, want both addresses with %q", msg, refused)
		}
		if p.Addresses != nil || !strings.HasPrefix(p.Message(), header("FAILOVER", addresses)+"beat "+addresses[0]) {
			t.Errorf("Pick = %+v, want no address and the beats tried", p)
		}
	})

	testInterrupted(t, "FAILOVER", "beat", route.Failover)
}

func TestBusyover(t *testing.T) {
	t.Parallel()

	t.Run("SkipsBusyAndDead", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 4)
		group[0].setBusy(7, "job 7 is running, 2 runs queued")
		group[1].kill()
		s := route.Busyover(newProber(t))

		p, err := s.Pick(t.Context(), 7, addresses)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{addresses[2]}; !slices.Equal(p.Addresses, want) {
			t.Errorf("job 7: Addresses = %q, want %q", p.Addresses, want)
		}
		for _, want := range []string{
			header("BUSYOVER", addresses) + "idle beat " + addresses[0] + ": busy: job 7 is running, 2 runs queued; idle beat " + addresses[1] + ": unreachable: Get ",
			refused + "; idle beat " + addresses[2] + ": idle; chose " + addresses[2],
		} {
			if !strings.Contains(p.Message(), want) {
				t.Errorf("job 7: Message = %q, want it to contain %q", p.Message(), want)
			}
		}
		if n := group[3].idleBeats.Load(); n != 0 {
			t.Errorf("the executor after the chosen one got %d idle beats, want 0", n)
		}

		// Busy is per job: the first executor is idle for job 8.
		p, err = s.Pick(t.Context(), 8, addresses)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{addresses[0]}; !slices.Equal(p.Addresses, want) {
			t.Errorf("job 8: Addresses = %q, want %q", p.Addresses, want)
		}
	})

	t.Run("NoneIdle", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 3)
		group[0].setBusy(7, "job 7 is running")
		group[1].kill()
		group[2].setBusy(7, "")
		p, err := route.Busyover(newProber(t)).Pick(t.Context(), 7, addresses)
		if !errors.Is(err, route.ErrNoExecutor) {
			t.Fatalf("err = %v, want ErrNoExecutor", err)
		}
		msg := err.Error()
		if want := "BUSYOVER routing: no executor is idle: " + addresses[0] + ": busy: job 7 is running; " + addresses[1] + ": unreachable: "; !strings.HasPrefix(msg, want) {
			t.Errorf("err = %q, want it to start with %q", msg, want)
		}
		if want := refused + "; " + addresses[2] + ": busy"; !strings.HasSuffix(msg, want) {
			t.Errorf("err = %q, want it to end with %q", msg, want)
		}
		if p.Addresses != nil {
			t.Errorf("Addresses = %q, want none", p.Addresses)
		}
	})

	testInterrupted(t, "BUSYOVER", "idle beat", route.Busyover)
}

// testInterrupted checks that a probing strategy stops when its context ends.
func testInterrupted(t *testing.T, name, verb string, strategy func(route.Prober) route.Strategy) {
	t.Helper()
	t.Run("CanceledWhileProbing", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 2)
		group[0].setHang()
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-group[0].entered
			cancel()
		}()
		p, err := strategy(newProber(t)).Pick(ctx, 7, addresses)
		if !errors.Is(err, context.Canceled) || errors.Is(err, route.ErrNoExecutor) {
			t.Fatalf("err = %v, want context.Canceled and not ErrNoExecutor", err)
		}
		if want := name + " routing: stopped after 1 of 2 " + verb + "s: context canceled"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		if want := header(name, addresses) + verb + " " + addresses[0] + ": interrupted; stopped after 1 of 2 " + verb + "s: context canceled"; p.Message() != want {
			t.Errorf("Message = %q, want %q", p.Message(), want)
		}
		if n := group[1].beats.Load() + group[1].idleBeats.Load(); n != 0 {
			t.Errorf("the second executor was asked %d times after the context ended, want 0", n)
		}
	})

	t.Run("CanceledBefore", func(t *testing.T) {
		t.Parallel()

		group, addresses := newGroup(t, 2)
		errShutdown := errors.New("admin shutting down")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(errShutdown)
		p, err := strategy(newProber(t)).Pick(ctx, 7, addresses)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errShutdown) {
			t.Fatalf("err = %v, want context.Canceled and its cause", err)
		}
		if want := header(name, addresses) + "stopped after 0 of 2 " + verb + "s: admin shutting down"; p.Message() != want {
			t.Errorf("Message = %q, want %q", p.Message(), want)
		}
		for i, e := range group {
			if n := e.beats.Load() + e.idleBeats.Load(); n != 0 {
				t.Errorf("executor %d was asked %d times, want 0", i, n)
			}
		}
	})
}
