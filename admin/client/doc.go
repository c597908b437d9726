// Package client calls a Carillon admin's management API from Go: New
// returns the typed Connect clients of every management service, and
// WithToken makes them send a session or API token.
//
//	c := client.New(http.DefaultClient, "http://127.0.0.1:8080", client.WithToken(os.Getenv("CARILLON_API_TOKEN")))
//	res, err := c.Jobs.ListJobs(ctx, &carillonv1.ListJobsRequest{})
//
// The clients are the generated ones of
// github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect; any
// connect.ClientOption applies to them (connect.WithGRPC to speak gRPC,
// connect.WithProtoJSON for JSON on the wire, interceptors of your own).
package client
