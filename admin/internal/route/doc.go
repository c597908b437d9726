// Package route chooses which executors of a group run one fire of a job.
//
// Each route strategy of the admin is a small [Strategy], made by its constructor:
//
//   - FIRST, [First]: the first address.
//   - LAST, [Last]: the last address.
//   - ROUND_ROBIN, [RoundRobin]: per job, the address after the one it used last.
//   - RANDOM, [Random]: a uniformly random address.
//   - CONSISTENT_HASH, [ConsistentHash]: per job, a fixed address on a hash ring.
//   - LEAST_FREQUENTLY_USED, [LeastFrequentlyUsed]: per job, the address it used least often.
//   - LEAST_RECENTLY_USED, [LeastRecentlyUsed]: per job, the address it used least recently.
//   - FAILOVER, [Failover]: the first address whose Beat answers.
//   - BUSYOVER, [Busyover]: the first address whose IdleBeat says idle.
//   - SHARDING_BROADCAST, [ShardingBroadcast]: every address, shard i of n.
//
// [New] builds a strategy from its name, as the admin stores it.
//
// The addresses given to [Strategy.Pick] are the group's live executors, sorted and
// deduplicated, which makes FIRST, LAST and the shards of SHARDING_BROADCAST deterministic.
// Every strategy is safe for concurrent use. The stateful ones (ROUND_ROBIN,
// LEAST_FREQUENTLY_USED, LEAST_RECENTLY_USED) keep a little memory per job in this process
// only; they forget a job that has not been routed for a while (see [WithIdleTimeout]), so
// deleted jobs do not pin memory, and they adapt to executors joining and leaving the group
// without a burst of fires on the newcomer.
//
// Compared with xxl-job's routers: ROUND_ROBIN continues from the executor a job used last
// (no random start, no skipped or repeated executor when the group changes, no daily reset of
// jobs that are still running); LEAST_FREQUENTLY_USED starts a joining executor at the current
// minimum count instead of a random one; LEAST_RECENTLY_USED treats a joining executor as never
// used; and no strategy resets the state of every job at once.
package route
