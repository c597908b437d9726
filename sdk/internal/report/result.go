package report

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// MaxMessageBytes bounds a result's message.
const MaxMessageBytes = 8 << 10

// Key names a run: run ids are unique within one admin database only
// (a new database starts them at 1 again), so the executor keeps the runs,
// logs and results of different databases apart.
type Key struct {
	DB string // RunRequest.database_id; "" from admins that predate it
	ID int64
}

// Result is the outcome of one run, as reported to the admin.
type Result struct {
	RunID      int64                `json:"run_id"`
	DatabaseID string               `json:"database_id,omitempty"`
	Status     carillonv1.RunStatus `json:"status"`
	Message    string               `json:"message,omitempty"`
	FinishedAt time.Time            `json:"finished_at"`
	// StartedAt is when the handler started; zero for a run that never did.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Outputs are what the handler published (RunResult.outputs); nil
	// when nothing.
	Outputs map[string]string `json:"outputs,omitempty"`
	// AdminID is RunRequest.admin_id: the admin that sent the run, to
	// which its result goes first; "" from an admin alone.
	AdminID string `json:"admin_id,omitempty"`
}

// size is about how many bytes res takes in a ReportResults request: its
// strings, and a bound on the rest of its fields' encoding.
func (res Result) size() int {
	n := 64 + len(res.DatabaseID) + len(res.Message)
	for k, v := range res.Outputs {
		n += 8 + len(k) + len(v)
	}
	return n
}

// key names the run of res.
func (res Result) key() Key { return Key{res.DatabaseID, res.RunID} }

// NewResult returns the result of a run without a database id (see
// [run.result]), its message cut to maxMessageBytes and made valid UTF-8.
func NewResult(runID int64, status carillonv1.RunStatus, msg string, at time.Time) Result {
	if len(msg) > MaxMessageBytes {
		cut := MaxMessageBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return Result{RunID: runID, Status: status, Message: strings.ToValidUTF8(msg, "\uFFFD"), FinishedAt: at}
}

// Refusal is why an admin that answered a ReportResults call did not take
// one result of the batch: the Connect code of ResultOutcome.code and its
// message. The zero Refusal is a result taken.
type Refusal struct {
	Code    string
	Message string
}

// Malformed says whether the admin refused the result as Malformed: it will
// refuse it every time, so it is not sent again.
func (f Refusal) Malformed() bool { return f.Code == connect.CodeInvalidArgument.String() }

// OfDatabase names database db for a message: "" when db is empty.
func OfDatabase(db string) string {
	if db == "" {
		return ""
	}
	return fmt.Sprintf(" of database %q", db)
}
