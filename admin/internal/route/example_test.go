package route_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func ExampleRoundRobin() {
	rr := route.RoundRobin()
	ctx := context.Background()
	for _, group := range [][]string{
		{"http://a:9999", "http://b:9999", "http://c:9999"},
		{"http://a:9999", "http://b:9999", "http://c:9999"},
		{"http://a:9999", "http://c:9999"}, // b left: job 1 carries on after it
		{"http://a:9999", "http://c:9999"},
	} {
		pick, err := rr.Pick(ctx, 1, group)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(pick.Addresses[0])
	}
	// Output:
	// http://a:9999
	// http://b:9999
	// http://c:9999
	// http://a:9999
}

func ExampleShardingBroadcast() {
	pick, _ := route.ShardingBroadcast().Pick(context.Background(), 1, []string{"http://a:9999", "http://b:9999"})
	for i, address := range pick.Addresses {
		fmt.Printf("shard %d of %d: %s\n", i, len(pick.Addresses), address)
	}
	fmt.Println(pick.Message())
	// Output:
	// shard 0 of 2: http://a:9999
	// shard 1 of 2: http://b:9999
	// SHARDING_BROADCAST over 2 executors (http://a:9999, http://b:9999): 2 shards, shard i of 2 on the i-th executor from 0: 0 on http://a:9999, 1 on http://b:9999
}

func ExampleNew() {
	s, err := route.New("LEAST_RECENTLY_USED", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Pick(context.Background(), 1, nil)
	fmt.Println(err)
	fmt.Println(errors.Is(err, route.ErrNoExecutor))
	// Output:
	// LEAST_RECENTLY_USED routing: no live executor among 0 addresses
	// true
}
