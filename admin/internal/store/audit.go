package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// AuditStore keeps the audit log of the management API (Store.Audit).
type AuditStore struct{ *db }

// AuditPending is the audit entry of a management call in progress. Made
// with WithAudit, it is written by the call's first write transaction, in
// that transaction: the change and its record commit together, or neither
// does. Its Target may be completed after the call (Written then says
// whether the entry went in with a change).
type AuditPending struct {
	mu    sync.Mutex
	entry AuditEntry
	id    int64 // the entry's row, once written
}

type auditKey struct{}

// WithAudit returns ctx carrying e, to be written by the first write
// transaction made with the returned context, and the pending entry.
func WithAudit(ctx context.Context, e AuditEntry) (context.Context, *AuditPending) {
	p := &AuditPending{entry: e}
	return context.WithValue(ctx, auditKey{}, p), p
}

// Written says whether the entry was written with a change.
func (p *AuditPending) Written() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id != 0
}

// writeAudit writes the pending audit entry of ctx, if any and not written
// yet, in tx. It runs just before tx commits.
func writeAudit(ctx context.Context, tx *sql.Tx) (*AuditPending, error) {
	p, _ := ctx.Value(auditKey{}).(*AuditPending)
	if p == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.id != 0 {
		return nil, nil
	}
	id, err := insertAudit(ctx, tx, p.entry)
	if err != nil {
		return nil, err
	}
	p.id = id
	return p, nil
}

// insertAudit appends e to the audit log in tx and returns its ID.
func insertAudit(ctx context.Context, tx *sql.Tx, e AuditEntry) (int64, error) {
	return dbsqlc.New(tx).InsertAuditEntry(ctx, dbsqlc.InsertAuditEntryParams{At: e.At.UnixMilli(), UserID: e.UserID,
		Username: e.Username, Action: e.Action, Target: e.Target, Detail: e.Detail, Peer: e.Peer})
}

// forget undoes the record of a written entry whose transaction did not
// commit.
func (p *AuditPending) forget() {
	p.mu.Lock()
	p.id = 0
	p.mu.Unlock()
}

// Complete finishes p after its call succeeded: complete sets what
// only the call's response tells (the target it created, the user who
// logged in) on the entry written with the change, or, if the call wrote
// nothing through a transaction, the entry is appended now.
func (s AuditStore) Complete(ctx context.Context, p *AuditPending, complete func(*AuditEntry)) error {
	p.mu.Lock()
	id, e := p.id, p.entry
	p.mu.Unlock()
	before := e
	complete(&e)
	ctx = context.WithValue(context.WithoutCancel(ctx), auditKey{}, (*AuditPending)(nil)) // written here, not again
	if id == 0 {
		return s.Add(ctx, e)
	}
	if e == before {
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		return dbsqlc.New(tx).CompleteAuditEntry(ctx, dbsqlc.CompleteAuditEntryParams{Target: e.Target, UserID: e.UserID, Username: e.Username, ID: id})
	})
}

// AuditEntry records one management change.
type AuditEntry struct {
	ID       int64
	At       time.Time
	UserID   int64
	Username string
	// Action is the RPC, e.g. "JobService.UpdateJob".
	Action string
	// Target is what it changed, e.g. "job 7".
	Target string
	// Detail is the request as JSON, without secrets.
	Detail string
	Peer   string
}

// Add appends e to the audit log.
func (s AuditStore) Add(ctx context.Context, e AuditEntry) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := insertAudit(ctx, tx, e)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add audit entry: %w", err)
	}
	return nil
}

// AuditFilter selects audit entries. Zero fields select everything.
type AuditFilter struct {
	Username string
	Action   string
	// From <= at < To.
	From, To time.Time
	// BeforeID pages: only entries with a smaller ID.
	BeforeID int64
	Limit    int
}

// Log returns the entries f selects, newest first. Its statement is built
// from the filter's set fields, and compares usernames through the dialect
// (equalFold): it stays by hand.
func (s AuditStore) Log(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	where := []string{"1 = 1"}
	var a args
	if f.BeforeID > 0 {
		where = append(where, "id < "+a.add(f.BeforeID))
	}
	if f.Username != "" {
		where = append(where, s.d.equalFold("username", a.add(f.Username)))
	}
	if f.Action != "" {
		where = append(where, "action = "+a.add(f.Action))
	}
	if !f.From.IsZero() {
		where = append(where, "at >= "+a.add(f.From.UnixMilli()))
	}
	if !f.To.IsZero() {
		where = append(where, "at < "+a.add(f.To.UnixMilli()))
	}
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT id, at, user_id, username, action, target, detail, peer FROM audit_log WHERE `+
		strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT `+a.add(cmpLimit(f.Limit)), a...)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	defer rows.Close()
	var es []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at sql.NullInt64
		if err := rows.Scan(&e.ID, &at, &e.UserID, &e.Username, &e.Action, &e.Target, &e.Detail, &e.Peer); err != nil {
			return nil, fmt.Errorf("store: audit log: %w", err)
		}
		e.At = fromMillis(at)
		es = append(es, e)
	}
	return es, rows.Err()
}
