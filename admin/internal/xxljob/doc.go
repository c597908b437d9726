// Package xxljob speaks xxl-job's executor protocol, so that executors
// built on xxl-job-core (Java, 2.x and 3.x) or xxl-job-executor-go run
// unchanged against a Carillon admin, in the groups whose
// executor_protocol is EXECUTOR_PROTOCOL_XXL_JOB.
//
// Both directions are here, each in one file:
//
//   - admin.go: the admin's side, the paths xxl-job executors call
//     (/api/registry, /api/registryRemove, /api/callback), each turned into
//     the RegistryService call it means and made through the admin's own
//     Connect handler, so tokens, validation and idempotent settling are
//     Carillon's.
//   - client.go: the executor's side, an ExecutorServiceClient over
//     xxl-job's /run (or /trigger), /beat, /idleBeat, /kill and /log, which
//     the trigger uses for the executors of XXL_JOB groups.
//
// wire.go holds the JSON shapes of every version (classic 2.x to 3.2,
// 3.3 to 3.4, 3.5, and xxl-job-executor-go); glue.go maps xxl-job's GLUE
// types and block strategies to Carillon's; import.go reads an xxl-job
// MySQL dump into groups and jobs for JobService.ImportJobs.
package xxljob
