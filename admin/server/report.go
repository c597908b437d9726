package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// reportService implements carillonv1connect.ReportServiceHandler.
type reportService struct{ *Server }

func (reportService) GetDashboard(context.Context, *carillonv1.GetDashboardRequest) (*carillonv1.GetDashboardResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("GetDashboard is not implemented yet"))
}
