package admin_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestGracefulStopSendsClaimedFires: the scheduler claims fires up to
// 1.5 s ahead; a graceful stop sends every one of them on its instant
// before the admin exits, so none is left claimed and unsent (which the
// next admin would have to reconcile) and none fails.
func TestGracefulStopSendsClaimedFires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "carillon.db")
	a, err := admin.Open(ctx, admin.Config{DBPath: dbPath, Token: token, Logger: testLogger(t),
		AdminPassword: adminPassword, PasswordCost: bcrypt.MinCost, Console: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- a.Serve(serveCtx, ln) }()
	url := "http://" + ln.Addr().String()
	login, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url).Login(ctx,
		&carillonv1.LoginRequest{Username: admin.FirstAdminUsername, Password: adminPassword})
	if err != nil {
		t.Fatal(err)
	}
	credentials.Store(url, login.Token)
	c := newClients(url, http.DefaultClient)
	startExecutor(t, url, "stop")
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "stop"}})
	if err != nil {
		t.Fatal(err)
	}
	every := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?"}
	for i := range 5 {
		createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: fmt.Sprint("every second ", i), Schedule: every,
			Handler: "ok", Enabled: true})
	}
	eventually(t, 15*time.Second, func() error {
		res, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, PageSize: 100})
		if err != nil {
			return err
		}
		if len(res.Runs) < 10 {
			return fmt.Errorf("%d runs succeeded, want 10", len(res.Runs))
		}
		return nil
	})
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the admin did not stop in 30 s")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, store.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		switch {
		case r.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING && r.ExecutorAddress == "":
			t.Errorf("run %d (instant %s) claimed and left unsent by a graceful stop", r.ID, r.ScheduledAt.Format(time.TimeOnly))
		case r.Status != carillonv1.RunStatus_RUN_STATUS_RUNNING && r.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED:
			t.Errorf("run %d: %s (%s), want RUNNING (sent, result on its way) or SUCCEEDED", r.ID, r.Status, r.Message)
		}
	}
}
