package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/term"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// stdio is a command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// Exit codes of client commands, for scripts.
const (
	exitOK           = 0
	exitFailure      = 1 // anything not below: internal error, canceled, ...
	exitUsage        = 2 // unknown command, bad flag or argument
	exitUnauthorized = 3 // unauthenticated: no credential, or a wrong or expired one
	exitDenied       = 4 // permission_denied
	exitNotFound     = 5 // not_found
	exitRefused      = 6 // invalid_argument, already_exists, failed_precondition, out_of_range, resource_exhausted
	exitUnavailable  = 7 // unavailable: the admin (or an executor behind it) cannot be reached
)

const usageText = `Usage: carillon COMMAND [flags] [args]

Run the admin:
  serve                       the admin (carillon serve --help)
  reset-admin-password        on the admin's host, admin stopped: a new password for an ADMIN
                              (--db FILE, --user NAME, --password-stdin)

Client commands (they call a running admin):
  login --user NAME           log in; the session is saved in the config file
  logout                      end the saved session
  whoami                      the user you are
  group list | get ID | create APP | delete ID
                              (create --protocol xxl-job [--allow-scripts]: a group of xxl-job executors)
  group token ID [--clear]    give the group its own executor token, printed once (ADMIN)
  job list | get ID | create | update ID | start ID | stop ID | delete ID
  job trigger ID | preview [ID]
  run list | get ID | log ID [--follow] | kill ID
  user list | create NAME | update NAME | delete NAME | passwd | unlock NAME
  token create NAME | list | revoke ID      API tokens, for scripts and curl
  audit                       the audit log (ADMIN)
  import xxl-job FILE         an xxl-job database's groups and jobs, from a mysqldump, in one
                              transaction (ADMIN; --dry-run, --allow-scripts, --time-zone Z,
                              --db-time-zone Z)
  executor-token              the executor access token (ADMIN)

Every client command takes:
  --server URL      the admin (env CARILLON_SERVER; else the config file; else http://127.0.0.1:8080)
  --api-token TOKEN a session or API token (env CARILLON_API_TOKEN; else the config file's, for its server)
  --config FILE     written by login (env CARILLON_CONFIG; default: <user config dir>/carillon/config.json)
  --ca-file FILE    CA certificates (PEM) to trust besides the system's, for an https admin
                    signed by a private CA (env CARILLON_CA_FILE; else the config file's, for its server)
  --json            print the API's JSON instead of a table

Exit codes: 0 ok, 1 other failure, 2 usage, 3 unauthenticated (log in again), 4 permission denied,
5 not found, 6 refused (invalid argument, already exists, failed precondition, rate limited),
7 unavailable. Errors go to stderr as "carillon: <code>: <message>".
`

// usageError is a mistake in the command line (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode prints err (if any) to w and returns the exit code for it.
func exitCode(w io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(w, "carillon:", err)
		return exitUsage
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		fmt.Fprintln(w, "carillon:", err)
		return exitFailure
	}
	fmt.Fprintf(w, "carillon: %s: %s\n", ce.Code(), ce.Message())
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		return exitUnauthorized
	case connect.CodePermissionDenied:
		return exitDenied
	case connect.CodeNotFound:
		return exitNotFound
	case connect.CodeInvalidArgument, connect.CodeAlreadyExists, connect.CodeFailedPrecondition,
		connect.CodeOutOfRange, connect.CodeResourceExhausted:
		return exitRefused
	case connect.CodeUnavailable:
		return exitUnavailable
	}
	return exitFailure
}

// client runs a client command.
func client(ctx context.Context, cmd string, args []string, io stdio) error {
	commands := map[string]func(context.Context, *cmdEnv, []string) error{
		"login": cmdLogin, "logout": cmdLogout, "whoami": cmdWhoami,
		"group": cmdGroup, "job": cmdJob, "run": cmdRun,
		"user": cmdUser, "token": cmdToken, "audit": cmdAudit, "executor-token": cmdExecutorToken,
		"import": cmdImport,
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(io.out, usageText)
		return nil
	}
	f, ok := commands[cmd]
	if !ok {
		return usagef("unknown command %q (carillon help lists them)", cmd)
	}
	e := &cmdEnv{io: io, name: cmd}
	return e.explainTLS(f(ctx, e, args))
}

// cmdEnv is what a client command works with: its streams, its common flags
// and, once parsed, the clients.
type cmdEnv struct {
	io   stdio
	name string // "job create"

	server, token, configPath string
	caFile                    string // PEM file of CAs trusted besides the system's
	json                      bool
	http                      *http.Client

	config config // as read from configPath
}

// flags returns a flag set for the command with the common flags.
func (e *cmdEnv) flags(name string) *flag.FlagSet {
	e.name = name
	fs := flag.NewFlagSet("carillon "+name, flag.ContinueOnError)
	fs.SetOutput(e.io.err)
	fs.StringVar(&e.server, "server", os.Getenv("CARILLON_SERVER"), "admin URL (env CARILLON_SERVER)")
	fs.StringVar(&e.token, "api-token", os.Getenv("CARILLON_API_TOKEN"), "session or API token (env CARILLON_API_TOKEN)")
	fs.StringVar(&e.configPath, "config", os.Getenv("CARILLON_CONFIG"), "config file written by login (env CARILLON_CONFIG)")
	fs.StringVar(&e.caFile, "ca-file", os.Getenv("CARILLON_CA_FILE"),
		"PEM file of CA certificates to trust, besides the system's, for an https admin (env CARILLON_CA_FILE)")
	fs.BoolVar(&e.json, "json", false, "print JSON")
	return fs
}

// parse parses args, allowing flags after positional arguments
// ("job get 7 --json"), and requires exactly nargs of them (-1: any).
func (e *cmdEnv) parse(fs *flag.FlagSet, args []string, nargs int, what string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if nargs >= 0 && len(pos) != nargs {
		return nil, usagef("%s: want %s", e.name, what)
	}
	if err := e.load(); err != nil {
		return nil, err
	}
	return pos, nil
}

// config is the file login writes: the server, a session token for it and
// the CA file it was logged in to with.
type config struct {
	Server string `json:"server"`
	Token  string `json:"token,omitempty"`
	CAFile string `json:"caFile,omitempty"`
}

func (e *cmdEnv) configFile() (string, error) {
	if e.configPath != "" {
		return e.configPath, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("config file: %w (set --config or CARILLON_CONFIG)", err)
	}
	return filepath.Join(dir, "carillon", "config.json"), nil
}

// load reads the config file, if any, and settles the server, token and CA
// file: flags and environment first, then the file (whose token and CA
// file are used only for the file's own server, so the token is never sent
// elsewhere).
func (e *cmdEnv) load() error {
	path, err := e.configFile()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("config file: %w", err)
	default:
		if err := json.Unmarshal(b, &e.config); err != nil {
			return fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if e.server == "" {
		e.server = e.config.Server
	}
	if e.server == "" {
		e.server = "http://127.0.0.1:8080"
	}
	e.server = strings.TrimRight(e.server, "/")
	if e.config.Server == e.server {
		e.token = cmp.Or(e.token, e.config.Token)
		e.caFile = cmp.Or(e.caFile, e.config.CAFile)
	}
	e.http = &http.Client{Timeout: 2 * time.Minute}
	if e.caFile != "" {
		tc, err := trustCAFile(e.caFile)
		if err != nil {
			return fmt.Errorf("CA file: %w", err)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tc
		e.http.Transport = t
	}
	return nil
}

// trustCAFile returns a TLS configuration trusting the CA certificates in
// the PEM file at path besides the system's roots.
func trustCAFile(path string) (*tls.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// explainTLS adds to err, when the admin's certificate failed
// verification, what the person can do about it.
func (e *cmdEnv) explainTLS(err error) error {
	var (
		unknown x509.UnknownAuthorityError
		hint    string
	)
	switch {
	case errors.As(err, &unknown) && e.caFile != "":
		hint = "the admin's certificate is not signed by a CA in " + e.caFile
	case errors.As(err, &unknown):
		hint = "the admin's certificate is not signed by a CA this system trusts: " +
			"pass the CA's certificate (PEM) with --ca-file or CARILLON_CA_FILE"
	default:
		return err
	}
	code, cause := connect.CodeUnavailable, err
	if ce := new(connect.Error); errors.As(err, &ce) {
		code, cause = ce.Code(), ce.Unwrap()
	}
	return connect.NewError(code, fmt.Errorf("%w; %s", cause, hint))
}

func (e *cmdEnv) saveConfig(c config) (string, error) {
	path, err := e.configFile()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	return path, nil
}

// clients are the typed Connect clients of the management API.
type clients struct {
	group carillonv1connect.GroupServiceClient
	job   carillonv1connect.JobServiceClient
	run   carillonv1connect.RunServiceClient
	user  carillonv1connect.UserServiceClient
}

func (e *cmdEnv) clients() clients {
	opts := []connect.ClientOption{connect.WithInterceptors(sendToken(e.token))}
	hc := e.http
	if hc == nil { // load has not run
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	return clients{
		group: carillonv1connect.NewGroupServiceClient(hc, e.server, opts...),
		job:   carillonv1connect.NewJobServiceClient(hc, e.server, opts...),
		run:   carillonv1connect.NewRunServiceClient(hc, e.server, opts...),
		user:  carillonv1connect.NewUserServiceClient(hc, e.server, opts...),
	}
}

// sendToken adds "Authorization: Bearer <token>" when there is a token.
func sendToken(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if token != "" {
				req.Header().Set("Authorization", "Bearer "+token)
			}
			return next(ctx, req)
		}
	}
}

// printJSON prints m as the API's JSON.
func (e *cmdEnv) printJSON(m proto.Message) error {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.io.out, string(b))
	return err
}

// print prints m as JSON with --json, else as a table.
func (e *cmdEnv) print(m proto.Message, header []string, rows [][]string) error {
	if e.json {
		return e.printJSON(m)
	}
	tw := tabwriter.NewWriter(e.io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// printFields prints one message as NAME: value lines (or JSON).
func (e *cmdEnv) printFields(m proto.Message, fields [][2]string) error {
	if e.json {
		return e.printJSON(m)
	}
	tw := tabwriter.NewWriter(e.io.out, 0, 4, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

func fmtTime(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().Local().Format("2006-01-02 15:04:05")
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }

func fmtIDs(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmtID(id)
	}
	return strings.Join(parts, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// enumName prints an enum value without its type prefix: "CRON" for
// SCHEDULE_TYPE_CRON.
func enumName(e protoreflect.Enum, prefix string) string {
	v := e.Descriptor().Values().ByNumber(e.Number())
	if v == nil {
		return fmt.Sprint(e.Number())
	}
	return strings.TrimPrefix(string(v.Name()), prefix)
}

// parseEnum reads an enum value by name, with or without its prefix and in
// any case: "round_robin" is ROUTE_STRATEGY_ROUND_ROBIN.
func parseEnum(flagName, s string, ed protoreflect.EnumDescriptor, prefix string) (protoreflect.EnumNumber, error) {
	name := strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
	if !strings.HasPrefix(name, prefix) {
		name = prefix + name
	}
	v := ed.Values().ByName(protoreflect.Name(name))
	if v == nil || v.Number() == 0 {
		var names []string
		for i := 1; i < ed.Values().Len(); i++ {
			names = append(names, strings.ToLower(strings.TrimPrefix(string(ed.Values().Get(i).Name()), prefix)))
		}
		return 0, usagef("--%s: unknown value %q (want one of %s)", flagName, s, strings.Join(names, ", "))
	}
	return v.Number(), nil
}

func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s: not an id: %q", what, s)
	}
	return id, nil
}

func parseIDList(flagName, s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int64
	for _, part := range strings.Split(s, ",") {
		id, err := parseID("--"+flagName, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// readSecrets reads n secrets: lines of stdin with --password-stdin, else
// prompts on the terminal without echo.
func (e *cmdEnv) readSecrets(fromStdin bool, prompts ...string) ([]string, error) {
	var out []string
	if fromStdin {
		sc := bufio.NewScanner(e.io.in)
		for range prompts {
			if !sc.Scan() {
				return nil, usagef("--password-stdin: want %d line(s) on stdin", len(prompts))
			}
			out = append(out, strings.TrimRight(sc.Text(), "\r"))
		}
		return out, nil
	}
	f, ok := e.io.in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, usagef("no terminal to ask for the password on: pass it with --password-stdin")
	}
	for _, p := range prompts {
		fmt.Fprint(e.io.err, p)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.io.err)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// sub dispatches "NOUN VERB ...".
func sub(ctx context.Context, e *cmdEnv, noun string, args []string, verbs map[string]func(context.Context, *cmdEnv, []string) error) error {
	if len(args) == 0 {
		return usagef("%s: want a subcommand (carillon help)", noun)
	}
	f, ok := verbs[args[0]]
	if !ok {
		return usagef("%s: unknown subcommand %q (carillon help)", noun, args[0])
	}
	return f(ctx, e, args[1:])
}

// notFound is a not_found error found by the client itself (exit code 5).
func notFound(msg string) error { return connect.NewError(connect.CodeNotFound, errors.New(msg)) }
