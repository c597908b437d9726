package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// An API token (carillon token create NAME) in the environment, and the
// jobs of the admin on the default address.
func ExampleNew() {
	c := client.New(http.DefaultClient, "http://127.0.0.1:8080", client.WithToken(os.Getenv("CARILLON_API_TOKEN")))
	res, err := c.Jobs.ListJobs(context.Background(), &carillonv1.ListJobsRequest{PageSize: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range res.Jobs {
		fmt.Println(j.Id, j.Description)
	}
}
