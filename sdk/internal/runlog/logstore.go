package runlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dayLayout names a log directory: the UTC day its runs were accepted.
const dayLayout = "2006-01-02"

// CloseLogs closes logs together, like Close each, except that the ones
// kept in memory, and the end marks of those with files of their own, are
// appended to their segments with one write per segment. Each log stays
// locked until its record is written, so that a reader never finds it
// closed but not on disk.
func (s *Store) CloseLogs(logs []*Log) error {
	var recs []logRecord
	var errs []error
	var locked []*Log
	for _, l := range logs {
		if l == nil {
			continue
		}
		l.mu.Lock()
		locked = append(locked, l)
		if l.closed {
			continue
		}
		errs = append(errs, l.writeStart())
		l.closed = true
		if l.f == nil {
			recs = append(recs, logRecord{dir: l.dir, runID: l.runID, body: l.buf})
			l.buf = nil
			continue
		}
		errs = append(errs, l.f.Close())
		l.f = nil
		recs = append(recs, logRecord{dir: l.dir, runID: l.runID}) // its end mark
	}
	errs = append(errs, s.appendRecords(recs))
	for _, l := range locked {
		l.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Store lays out run logs on disk, by the UTC day the executor accepted
// the run, so that retention removes whole days, and by the admin database
// the run belongs to (RunRequest.database_id), since run ids are unique
// within one database only:
//
//	<dir>/<YYYY-MM-DD>/<run id / 1000>.seg2                  runs without a database id: kept in memory until the run ended
//	<dir>/<YYYY-MM-DD>/<run id / 1000>/<run id>.log          and logs that needed a file of their own
//	<dir>/<YYYY-MM-DD>/db-<database id>/<run id / 1000>.seg2 the same for the runs of one database
//	<dir>/<YYYY-MM-DD>/db-<database id>/<run id / 1000>/<run id>.log
//
// A log with a file of its own also gets, when its run ends, an empty
// record in its segment: its end mark (see [Store.logStates]). The
// file is what is read; the mark says the run ended, so that a restarted
// executor tells a run that ended from one its killed process cut short.
//
// The runs without a database id (from admins that predate it) keep the
// layout of earlier versions, so their logs stay readable (the
// pre-release "<run id / 1000>.seg" segments are no longer read). A run's
// directory, "<YYYY-MM-DD>" or "<YYYY-MM-DD>/db-<database id>", is its
// runDir. Grouping by run id / 1000 keeps at most 1000 runs per segment and
// 1000 files per directory even when jobs fire every second.
type Store struct {
	dir    string
	now    func() time.Time
	dirs   sync.Map // directories known to exist
	dbDirs sync.Map // database id -> its directory's name (dbDirName)

	segMu sync.Mutex
	segs  map[string]*segmentFile // open for appending, by path
	clock uint64                  // counts uses of segs, for closing the least recently used

	earlierMu     sync.Mutex
	earlierDays   []string               // today and yesterday when the store was opened
	earlier       map[string][]int64     // buckets (run id / 1000) with logs on those days then, sorted, by dbDirName ("" without a database)
	earlierLoaded map[earlierBucket]bool // buckets whose runs earlierRuns returned
}

// earlierBucket is a bucket of one database's runs, for
// [logStore.earlierRuns].
type earlierBucket struct {
	dbDir  string
	bucket int64
}

// dbDirPrefix starts the name of a database's directory in a day.
const dbDirPrefix = "db-"

// dbDirName names the directory of the runs of database db in a day: ""
// for the runs without a database id; "db-" and db itself when db is 1 to
// 64 lowercase letters, digits, '-' or '_' (an admin's database id is 32
// hex digits); else "db-~" and the SHA-256 of db in hex, so that any id is
// a safe file name, even on a case-insensitive file system, and two ids
// never share a directory.
func dbDirName(db string) string {
	if db == "" {
		return ""
	}
	plain := len(db) <= 64
	for i := 0; i < len(db) && plain; i++ {
		c := db[i]
		plain = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
	}
	if plain {
		return dbDirPrefix + db
	}
	sum := sha256.Sum256([]byte(db))
	return dbDirPrefix + "~" + hex.EncodeToString(sum[:])
}

// RunDir is the directory, relative to the store, of the logs of the runs
// of database db accepted on day.
func (s *Store) RunDir(day, db string) string {
	if db == "" {
		return day
	}
	return day + string(filepath.Separator) + s.dbDir(db)
}

// dbDir is dbDirName(db), remembered.
func (s *Store) dbDir(db string) string {
	if db == "" {
		return ""
	}
	name, ok := s.dbDirs.Load(db)
	if !ok {
		name, _ = s.dbDirs.LoadOrStore(db, dbDirName(db))
	}
	return name.(string)
}

// Open opens the run logs under dir, creating it if needed, and
// notes which runs had logs today or yesterday, for [logStore.earlierRuns].
func Open(dir string, now func() time.Time) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	s := &Store{dir: dir, now: now, earlier: make(map[string][]int64), earlierLoaded: make(map[earlierBucket]bool)}
	t := now().UTC()
	for _, day := range []string{t.Format(dayLayout), t.AddDate(0, 0, -1).Format(dayLayout)} {
		found, err := s.noteBuckets(filepath.Join(dir, day), "")
		if err != nil {
			return nil, err
		}
		if found {
			s.earlierDays = append(s.earlierDays, day)
		}
	}
	for db, buckets := range s.earlier {
		slices.Sort(buckets)
		s.earlier[db] = slices.Compact(buckets)
	}
	return s, nil
}

// noteBuckets adds the buckets with logs in the directory p, of the
// database whose directory is dbDir, to s.earlier; in a day's directory
// (dbDir ""), also those in its databases' directories. found is false
// when p does not exist.
func (s *Store) noteBuckets(p, dbDir string) (found bool, err error) {
	entries, err := os.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if dbDir == "" && e.IsDir() && strings.HasPrefix(e.Name(), dbDirPrefix) {
			if _, err := s.noteBuckets(filepath.Join(p, e.Name()), e.Name()); err != nil {
				return false, err
			}
			continue
		}
		name, seg := strings.CutSuffix(e.Name(), segmentExt)
		if b, err := strconv.ParseInt(name, 10, 64); err == nil && seg != e.IsDir() {
			s.earlier[dbDir] = append(s.earlier[dbDir], b)
		}
	}
	return true, nil
}

// EarlierRuns returns the ids of the runs of database db that had a log
// today or yesterday when the store was opened, and share runID's bucket
// (run id / 1000); it returns them once per bucket, and none for the
// buckets that had no log then. So a restarted executor learns which runs
// it accepted before the restart, a thousand at a time and only for the run
// ids near those it had, without reading anything from disk for the runs
// that are new.
func (s *Store) EarlierRuns(db string, runID int64) ([]int64, error) {
	key := earlierBucket{s.dbDir(db), runID / 1000}
	s.earlierMu.Lock()
	defer s.earlierMu.Unlock()
	if _, found := slices.BinarySearch(s.earlier[key.dbDir], key.bucket); !found || s.earlierLoaded[key] {
		return nil, nil
	}
	s.earlierLoaded[key] = true
	var ids []int64
	var errs []error
	for _, day := range s.earlierDays {
		dir := s.RunDir(day, db)
		seg, err := s.segmentRunIDs(dir, runID)
		ids = append(ids, seg...)
		errs = append(errs, err)
		entries, err := os.ReadDir(s.dayPath(dir, strconv.FormatInt(key.bucket, 10)))
		if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			name, _ := strings.CutSuffix(e.Name(), ".log")
			if id, err := strconv.ParseInt(name, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids) // a log with a file of its own has its end mark in the segment too
	return slices.Compact(ids), errors.Join(errs...)
}

// State is what a run's log on disk says of the run.
type State uint8

const (
	// Ended: the run ended. Its log is a record of a segment (kept in
	// memory until the run ended, then written whole), or a file of its
	// own with its end mark: an empty record of the run in its segment,
	// written when the file is closed.
	Ended State = iota + 1
	// CutShort: the run's log is a file of its own without its end
	// mark: the process that ran it was killed before the run ended.
	CutShort
)

// States returns what the logs on disk say of each of ids, runs of
// database db, as a map; a run without a log on any day kept is not in it.
// Newest day first, the first day with a log of the run decides. It reads
// each segment and bucket directory of the ids once per day, so it costs a
// few file reads per thousand ids and day kept: for questions about a few
// runs (HeldRuns), not for every run.
func (s *Store) States(db string, ids []int64) (map[int64]State, error) {
	asked := make(map[int64]bool, len(ids))
	buckets := make(map[int64]bool)
	for _, id := range ids {
		asked[id] = true
		buckets[id/1000] = true
	}
	days, err := s.days()
	if err != nil {
		return nil, err
	}
	states := make(map[int64]State)
	var errs []error
	for _, day := range days {
		dir := s.RunDir(day, db)
		found := make(map[int64]State)
		for b := range buckets {
			seg, err := s.segmentRunIDs(dir, b*1000)
			errs = append(errs, err)
			for _, id := range seg {
				if asked[id] {
					found[id] = Ended
				}
			}
			entries, err := os.ReadDir(s.dayPath(dir, strconv.FormatInt(b, 10)))
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			for _, e := range entries {
				name, _ := strings.CutSuffix(e.Name(), ".log")
				if id, err := strconv.ParseInt(name, 10, 64); err == nil && asked[id] && found[id] == 0 {
					found[id] = CutShort
				}
			}
		}
		for id, st := range found {
			if states[id] == 0 {
				states[id] = st
			}
		}
	}
	return states, errors.Join(errs...)
}

// Today names the directory of the runs accepted now.
func (s *Store) Today() string {
	return s.now().UTC().Format(dayLayout)
}

// dayPath is the path of name in the run directory dir (see runDir).
func (s *Store) dayPath(dir, name string) string {
	return filepath.Join(s.dir, dir, name)
}

// path is the path of runID's own log file in the run directory dir.
func (s *Store) path(dir string, runID int64) string {
	return filepath.Join(s.dir, dir, strconv.FormatInt(runID/1000, 10), strconv.FormatInt(runID, 10)+".log")
}

// days lists the day directories, newest first.
func (s *Store) days() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var days []string
	for _, e := range entries {
		if _, err := time.Parse(dayLayout, e.Name()); err == nil && e.IsDir() {
			days = append(days, e.Name())
		}
	}
	slices.Reverse(days)
	return days, nil
}

// Find opens the log of run runID of database db, for reading: its own
// file, or else its record in a segment, newest day first. It fails with an
// error wrapping [fs.ErrNotExist] when the run has no log; the logs of
// other databases' runs of the same id are not looked at.
func (s *Store) Find(db string, runID int64) (io.ReadCloser, error) {
	days, err := s.days()
	if err != nil {
		return nil, err
	}
	for _, day := range days {
		dir := s.RunDir(day, db)
		f, err := os.Open(s.path(dir, runID))
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		rc, err := s.segmentRecord(dir, runID)
		if err == nil {
			return rc, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("log of run %d: %w", runID, fs.ErrNotExist)
}

// create opens the file at p for appending with flag (os.O_WRONLY or
// os.O_RDWR), creating it and its directory if needed. Directories made
// before are remembered, so the usual case is one call.
func (s *Store) create(p string, flag int) (*os.File, error) {
	flag |= os.O_CREATE | os.O_APPEND
	dir := filepath.Dir(p)
	if _, ok := s.dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		s.dirs.Store(dir, true)
	}
	f, err := os.OpenFile(p, flag, 0o640) //nolint:gosec // run logs are read by operators' tools, like any service log
	if errors.Is(err, fs.ErrNotExist) {   // the cleaner removed the directory since
		s.dirs.Delete(dir)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(p, flag, 0o640) //nolint:gosec // run logs are read by operators' tools, like any service log
	}
	return f, err
}

// Clean removes the days whose every log is older than retention, after
// closing their open segments. A negative retention keeps everything.
func (s *Store) Clean(retention time.Duration) (removed []string, err error) {
	if retention < 0 {
		return nil, nil
	}
	days, err := s.days()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var errs []error
	for _, day := range days {
		t, _ := time.Parse(dayLayout, day)
		if now.Before(t.Add(24*time.Hour + retention)) {
			continue
		}
		s.closeDay(day)
		dir := filepath.Join(s.dir, day)
		s.dirs.Range(func(k, _ any) bool {
			if d := k.(string); d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
				s.dirs.Delete(k)
			}
			return true
		})
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, day)
	}
	return removed, errors.Join(errs...)
}
