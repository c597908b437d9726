package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// spool keeps every result on disk, one small file per run, from the moment
// the run ends until the admin acknowledges it, so that no result is lost
// to an admin outage or an executor restart:
//
//	<dir>/<run id>.json
//
// A file is written to a temporary name and renamed, so a crash leaves
// either the whole result or nothing.
type spool struct {
	dir string
}

// spooled is the on-disk form of a result.
type spooled struct {
	RunID      int64     `json:"run_id"`
	Status     string    `json:"status"`
	Message    string    `json:"message,omitempty"`
	FinishedAt time.Time `json:"finished_at"`
}

// openSpool creates dir if needed and removes temporary files a crash left.
func openSpool(dir string) (*spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &spool{dir: dir}, nil
}

func (s *spool) path(runID int64) string {
	return filepath.Join(s.dir, strconv.FormatInt(runID, 10)+".json")
}

// put stores r, replacing an earlier result of the same run.
func (s *spool) put(r result) error {
	b, err := json.Marshal(spooled{RunID: r.RunID, Status: r.Status.String(), Message: r.Message, FinishedAt: r.FinishedAt})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, strconv.FormatInt(r.RunID, 10)+"-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path(r.RunID))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("spool result of run %d: %w", r.RunID, err)
	}
	return nil
}

// remove forgets an acknowledged result.
func (s *spool) remove(runID int64) error {
	err := os.Remove(s.path(runID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// load reads up to limit stored results for which skip is false; more says
// whether others remain. A file that does not decode is renamed *.bad and
// reported in err; loading goes on.
func (s *spool) load(limit int, skip func(runID int64) bool) (results []result, more bool, err error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, false, err
	}
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		id, perr := strconv.ParseInt(name, 10, 64)
		if perr != nil || skip(id) {
			continue
		}
		if len(results) == limit {
			more = true
			break
		}
		r, derr := s.read(id)
		if derr != nil {
			errs = append(errs, derr)
			_ = os.Rename(s.path(id), s.path(id)+".bad")
			continue
		}
		results = append(results, r)
	}
	return results, more, errors.Join(errs...)
}

func (s *spool) read(runID int64) (result, error) {
	b, err := os.ReadFile(s.path(runID))
	if err != nil {
		return result{}, err
	}
	var sp spooled
	if err := json.Unmarshal(b, &sp); err != nil {
		return result{}, fmt.Errorf("spooled result %s: %w", s.path(runID), err)
	}
	status, ok := carillonv1.RunStatus_value[sp.Status]
	if !ok || sp.RunID != runID {
		return result{}, fmt.Errorf("spooled result %s: bad run id or status %q", s.path(runID), sp.Status)
	}
	return result{RunID: sp.RunID, Status: carillonv1.RunStatus(status), Message: sp.Message, FinishedAt: sp.FinishedAt}, nil
}
