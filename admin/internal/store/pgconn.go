package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5/stdlib"
)

// pgConnector opens pgx's database/sql connections wrapped in pgConn,
// which translates each statement with pgText. The store's code then
// reads the same over both databases.
type pgConnector struct{ c driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("store: pgx returned an unexpected connection type")
	}
	return pgConn{sc}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.c.Driver() }

// pgConn is a pgx connection whose statements are written in SQLite's
// dialect (pgText), and whose bool arguments go to INTEGER columns.
type pgConn struct{ c *stdlib.Conn }

var (
	_ driver.ConnPrepareContext = pgConn{}
	_ driver.ConnBeginTx        = pgConn{}
	_ driver.ExecerContext      = pgConn{}
	_ driver.QueryerContext     = pgConn{}
	_ driver.Pinger             = pgConn{}
	_ driver.NamedValueChecker  = pgConn{}
	_ driver.SessionResetter    = pgConn{}
)

func (p pgConn) Prepare(q string) (driver.Stmt, error) { return p.c.Prepare(pgText(q)) }
func (p pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return p.c.PrepareContext(ctx, pgText(q))
}
func (p pgConn) Close() error { return p.c.Close() }
func (p pgConn) Begin() (driver.Tx, error) {
	return p.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (p pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return p.c.BeginTx(ctx, opts)
}
func (p pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return p.c.ExecContext(ctx, pgText(q), args)
}
func (p pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return p.c.QueryContext(ctx, pgText(q), args)
}
func (p pgConn) Ping(ctx context.Context) error              { return p.c.Ping(ctx) }
func (p pgConn) ResetSession(ctx context.Context) error      { return p.c.ResetSession(ctx) }
func (p pgConn) IsValid() bool                               { return !p.c.Conn().IsClosed() }
func (p pgConn) CheckNamedValue(nv *driver.NamedValue) error { return checkPGValue(nv) }

// checkPGValue stores a bool as the 0 or 1 of the INTEGER columns both
// databases share; pgx takes every other value as it is.
func checkPGValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}
