package route_test

import (
	"slices"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/route"
)

func TestShardingBroadcast(t *testing.T) {
	t.Parallel()

	for _, test := range []struct {
		in, want string
		message  string
	}{
		{"a", "a", "SHARDING_BROADCAST over 1 executor (http://a): 1 shard, 0 of 1 on http://a"},
		{"a b c", "a b c", "SHARDING_BROADCAST over 3 executors (http://a, http://b, http://c): 3 shards, shard i of 3 on the i-th executor from 0: 0 on http://a, 2 on http://c"},
		// Out of contract, but shard i must stay the same executor: sort and deduplicate.
		{"c a c b", "a b c", "SHARDING_BROADCAST over 3 executors (http://a, http://b, http://c): 3 shards, shard i of 3 on the i-th executor from 0: 0 on http://a, 2 on http://c"},
	} {
		for job := range int64(2) {
			p, err := route.ShardingBroadcast().Pick(t.Context(), job, split(test.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := split(test.want); !slices.Equal(p.Addresses, want) {
				t.Errorf("Pick(%d, %q).Addresses = %q, want %q", job, test.in, p.Addresses, want)
			}
			if p.Message() != test.message {
				t.Errorf("Pick(%d, %q).Message() = %q, want %q", job, test.in, p.Message(), test.message)
			}
		}
	}

	p, err := route.ShardingBroadcast().Pick(t.Context(), 1, hosts(100))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Addresses, hosts(100)) {
		t.Errorf("100 executors: Addresses = %q, want all of them in order", p.Addresses)
	}
}
