package server

import (
	"context"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// reportService implements carillonv1connect.ReportServiceHandler.
type reportService struct{ *Server }

// maxDashboardDays bounds GetDashboard's range.
const maxDashboardDays = 366

func (s reportService) GetDashboard(ctx context.Context, req *carillonv1.GetDashboardRequest) (*carillonv1.GetDashboardResponse, error) {
	now := s.cfg.NowFunc()
	to := fromTS(req.To)
	if to.IsZero() {
		to = now
	}
	from := fromTS(req.From)
	if from.IsZero() {
		from = to.AddDate(0, 0, -6)
	}
	if from.After(to) {
		return nil, invalid("from", "must not be after to")
	}
	// Whole days in the admin's zone, from's day through to's day.
	from, to = from.In(time.Local), to.In(time.Local)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.Local)
	last := time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, time.Local)
	if last.Sub(day) > maxDashboardDays*24*time.Hour {
		return nil, invalid("from", "the range must be at most %d days", maxDashboardDays)
	}
	res := &carillonv1.GetDashboardResponse{}
	var scope store.Groups // a MEMBER's counts are of their groups only
	scope.All, scope.IDs = auth.FromContext(ctx).ReadScope()
	var err error
	if res.JobCount, res.EnabledJobCount, err = s.cfg.Store.Jobs.Count(ctx, scope); err != nil {
		return nil, s.toConnect(err)
	}
	if res.ExecutorCount, err = s.cfg.Store.Registry.Count(ctx, now.Add(-s.cfg.ExecutorTTL), scope); err != nil {
		return nil, s.toConnect(err)
	}
	for ; !day.After(last); day = day.AddDate(0, 0, 1) {
		counts, err := s.cfg.Store.Runs.Count(ctx, day, day.AddDate(0, 0, 1), scope)
		if err != nil {
			return nil, s.toConnect(err)
		}
		d := &carillonv1.DayCount{
			Day:       day.Format(time.DateOnly),
			Succeeded: counts[carillonv1.RunStatus_RUN_STATUS_SUCCEEDED],
			Running:   counts[carillonv1.RunStatus_RUN_STATUS_RUNNING] + counts[carillonv1.RunStatus_RUN_STATUS_PENDING],
		}
		for _, st := range failedStatuses {
			d.Failed += counts[st]
		}
		res.Days = append(res.Days, d)
		res.RunCount += d.Succeeded + d.Failed + d.Running
	}
	return res, nil
}

// failedStatuses count as failed on the dashboard.
var failedStatuses = []carillonv1.RunStatus{
	carillonv1.RunStatus_RUN_STATUS_FAILED, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT,
	carillonv1.RunStatus_RUN_STATUS_KILLED, carillonv1.RunStatus_RUN_STATUS_LOST,
}
