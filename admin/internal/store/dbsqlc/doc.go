// Package dbsqlc is the store's queries (../queries/*.sql) as Go, generated
// by sqlc from ../sqlc.yaml (`make sqlc`): only the store uses it, and only
// through its own types. Each query runs over SQLite and PostgreSQL alike.
package dbsqlc
