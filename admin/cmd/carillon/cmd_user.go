package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func cmdUser(ctx context.Context, e *cmdEnv, args []string) error {
	return sub(ctx, e, "user", args, map[string]func(context.Context, *cmdEnv, []string) error{
		"list": userList, "create": userCreate, "update": userUpdate, "delete": userDelete, "passwd": userPasswd, "unlock": userUnlock,
	})
}

var userHeader = []string{"ID", "USERNAME", "ROLE", "GROUPS", "DISABLED", "LAST LOGIN"}

func userRow(u *carillonv1.User) []string {
	return []string{fmtID(u.Id), u.Username, enumName(u.Role, "ROLE_"), fmtIDs(u.GroupIds), fmt.Sprint(u.Disabled), fmtTime(u.LastLoginAt)}
}

func userFields(u *carillonv1.User) [][2]string {
	return [][2]string{{"ID", fmtID(u.Id)}, {"Username", u.Username}, {"Role", enumName(u.Role, "ROLE_")},
		{"Groups", fmtIDs(u.GroupIds)}, {"Disabled", fmt.Sprint(u.Disabled)}, {"Last login", fmtTime(u.LastLoginAt)}}
}

func userList(ctx context.Context, e *cmdEnv, args []string) error {
	if _, err := e.parse(e.flags("user list"), args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
	if err != nil {
		return err
	}
	var rows [][]string
	for _, u := range res.Users {
		rows = append(rows, userRow(u))
	}
	return e.print(res, userHeader, rows)
}

func parseRole(s string) (carillonv1.Role, error) {
	n, err := parseEnum("role", s, carillonv1.Role(0).Descriptor(), "ROLE_")
	return carillonv1.Role(n), err
}

func userCreate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("user create")
	role := fs.String("role", "", "admin, member or viewer (required)")
	groups := fs.String("groups", "", "MEMBER: the group ids they may operate, comma-separated")
	stdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin instead of asking")
	pos, err := e.parse(fs, args, 1, "a username: carillon user create NAME --role ROLE")
	if err != nil {
		return err
	}
	u := &carillonv1.User{Username: pos[0]}
	if u.Role, err = parseRole(*role); err != nil {
		return err
	}
	if u.GroupIds, err = parseIDList("groups", *groups); err != nil {
		return err
	}
	pw, err := e.readSecrets(*stdin, "Password for "+u.Username+": ")
	if err != nil {
		return err
	}
	res, err := e.clients().user.CreateUser(ctx, &carillonv1.CreateUserRequest{User: u, Password: pw[0]})
	if err != nil {
		return err
	}
	return e.print(res, userHeader, [][]string{userRow(res.User)})
}

// userByName resolves a username or id to a user.
func userByName(ctx context.Context, e *cmdEnv, name string) (*carillonv1.User, error) {
	c := e.clients()
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		res, err := c.user.GetUser(ctx, &carillonv1.GetUserRequest{Id: id})
		if err != nil {
			return nil, err
		}
		return res.User, nil
	}
	res, err := c.user.ListUsers(ctx, &carillonv1.ListUsersRequest{})
	if err != nil {
		return nil, err
	}
	for _, u := range res.Users {
		if strings.EqualFold(u.Username, name) {
			return u, nil
		}
	}
	return nil, notFound(fmt.Sprintf("no user %q", name))
}

func userUpdate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("user update")
	role := fs.String("role", "", "admin, member or viewer")
	groups := fs.String("groups", "", "MEMBER: the group ids they may operate, comma-separated (replaces the list)")
	disable := fs.Bool("disable", false, "disable the user: their sessions and tokens stop working")
	enable := fs.Bool("enable", false, "enable the user again")
	stdin := fs.Bool("password-stdin", false, "set a new password, read from the first line of stdin")
	pos, err := e.parse(fs, args, 1, "a username or id")
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	u, err := userByName(ctx, e, pos[0])
	if err != nil {
		return err
	}
	req := &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: u.Id}, UpdateMask: &fieldmaskpb.FieldMask{}}
	if set["role"] {
		if req.User.Role, err = parseRole(*role); err != nil {
			return err
		}
		req.UpdateMask.Paths = append(req.UpdateMask.Paths, "role")
		if !set["groups"] && req.User.Role != carillonv1.Role_ROLE_MEMBER {
			req.UpdateMask.Paths = append(req.UpdateMask.Paths, "group_ids") // clear the grants
		}
	}
	if set["groups"] {
		if req.User.GroupIds, err = parseIDList("groups", *groups); err != nil {
			return err
		}
		req.UpdateMask.Paths = append(req.UpdateMask.Paths, "group_ids")
	}
	if *disable && *enable {
		return usagef("user update: --disable and --enable exclude each other")
	}
	if *disable || *enable {
		req.User.Disabled = *disable
		req.UpdateMask.Paths = append(req.UpdateMask.Paths, "disabled")
	}
	if *stdin {
		pw, err := e.readSecrets(true, "")
		if err != nil {
			return err
		}
		req.Password = pw[0]
	}
	if len(req.UpdateMask.Paths) == 0 && req.Password == "" {
		return usagef("user update: nothing to change")
	}
	if len(req.UpdateMask.Paths) == 0 {
		req.UpdateMask.Paths = []string{"disabled"} // keep everything; only the password changes
		req.User.Disabled = u.Disabled
	}
	res, err := e.clients().user.UpdateUser(ctx, req)
	if err != nil {
		return err
	}
	return e.print(res, userHeader, [][]string{userRow(res.User)})
}

func userDelete(ctx context.Context, e *cmdEnv, args []string) error {
	pos, err := e.parse(e.flags("user delete"), args, 1, "a username or id")
	if err != nil {
		return err
	}
	u, err := userByName(ctx, e, pos[0])
	if err != nil {
		return err
	}
	res, err := e.clients().user.DeleteUser(ctx, &carillonv1.DeleteUserRequest{Id: u.Id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "deleted user %s\n", u.Username)
	return nil
}

func userUnlock(ctx context.Context, e *cmdEnv, args []string) error {
	pos, err := e.parse(e.flags("user unlock"), args, 1, "a username or id")
	if err != nil {
		return err
	}
	u, err := userByName(ctx, e, pos[0])
	if err != nil {
		return err
	}
	res, err := e.clients().user.UnlockUser(ctx, &carillonv1.UnlockUserRequest{Id: u.Id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "unlocked user %s: its next logins pass the per-username limit\n", u.Username)
	return nil
}

func userPasswd(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("user passwd")
	stdin := fs.Bool("password-stdin", false, "read the current and the new password from the first two lines of stdin")
	if _, err := e.parse(fs, args, 0, "no arguments: it changes your own password"); err != nil {
		return err
	}
	pw, err := e.readSecrets(*stdin, "Current password: ", "New password: ")
	if err != nil {
		return err
	}
	res, err := e.clients().user.ChangePassword(ctx, &carillonv1.ChangePasswordRequest{OldPassword: pw[0], NewPassword: pw[1]})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintln(e.io.out, "password changed; your other sessions have ended")
	return nil
}

func cmdToken(ctx context.Context, e *cmdEnv, args []string) error {
	return sub(ctx, e, "token", args, map[string]func(context.Context, *cmdEnv, []string) error{
		"create": tokenCreate, "list": tokenList, "revoke": tokenRevoke,
	})
}

// tokenCreate prints only the token on stdout, so that
// TOKEN=$(carillon token create ci) works.
func tokenCreate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("token create")
	expires := fs.Duration("expires", 0, "lifetime, e.g. 720h (default: never expires)")
	pos, err := e.parse(fs, args, 1, "a name: carillon token create NAME")
	if err != nil {
		return err
	}
	if *expires < 0 {
		return usagef("--expires: must not be negative")
	}
	res, err := e.clients().user.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{
		Name: pos[0], ExpiresInSeconds: int64(expires.Round(time.Second) / time.Second),
	})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintln(e.io.out, res.Token)
	fmt.Fprintf(e.io.err, "API token %q (id %d) of %s: shown only now; send it as \"Authorization: Bearer <token>\"\n",
		res.ApiToken.Name, res.ApiToken.Id, res.ApiToken.Username)
	return nil
}

func tokenList(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("token list")
	all := fs.Bool("all", false, "every user's tokens (ADMIN)")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().user.ListApiTokens(ctx, &carillonv1.ListApiTokensRequest{AllUsers: *all})
	if err != nil {
		return err
	}
	var rows [][]string
	for _, t := range res.ApiTokens {
		rows = append(rows, []string{fmtID(t.Id), t.Name, t.Username, fmtTime(t.CreatedAt), fmtTime(t.ExpiresAt), fmtTime(t.LastUsedAt)})
	}
	return e.print(res, []string{"ID", "NAME", "USER", "CREATED", "EXPIRES", "LAST USED"}, rows)
}

func tokenRevoke(ctx context.Context, e *cmdEnv, args []string) error {
	pos, err := e.parse(e.flags("token revoke"), args, 1, "a token id (carillon token list)")
	if err != nil {
		return err
	}
	id, err := parseID("token", pos[0])
	if err != nil {
		return err
	}
	res, err := e.clients().user.RevokeApiToken(ctx, &carillonv1.RevokeApiTokenRequest{Id: id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "revoked API token %d\n", id)
	return nil
}

func cmdAudit(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("audit")
	user := fs.String("user", "", "only entries by this username")
	action := fs.String("action", "", "only entries of this action, e.g. JobService.DeleteJob")
	limit := fs.Int("limit", 50, "at most this many entries, newest first")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{
		Username: *user, Action: *action, PageSize: int32(min(max(*limit, 1), 500)),
	})
	if err != nil {
		return err
	}
	var rows [][]string
	for _, a := range res.Entries {
		rows = append(rows, []string{fmtTime(a.Time), a.Username, a.Action, orDash(a.Target), orDash(a.Peer)})
	}
	return e.print(res, []string{"TIME", "USER", "ACTION", "TARGET", "PEER"}, rows)
}

func cmdExecutorToken(ctx context.Context, e *cmdEnv, args []string) error {
	if _, err := e.parse(e.flags("executor-token"), args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().user.GetExecutorToken(ctx, &carillonv1.GetExecutorTokenRequest{})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintln(e.io.out, res.Token)
	return nil
}
