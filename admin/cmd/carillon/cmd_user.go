package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func userCmd(e *cmdEnv) *cobra.Command {
	return noun("user", "Users: their roles, group grants and passwords",
		userListCmd(e), userGetCmd(e), userCreateCmd(e), userUpdateCmd(e), userDeleteCmd(e), userPasswdCmd(e), userUnlockCmd(e))
}

var userHeader = []string{"ID", "USERNAME", "ROLE", "GROUPS", "DISABLED", "LAST LOGIN"}

func userRow(u *carillonv1.User) []string {
	return []string{fmtID(u.Id), u.Username, enumName(u.Role, "ROLE_"), fmtIDs(u.GroupIds), fmt.Sprint(u.Disabled), fmtTime(u.LastLoginAt)}
}

func userFields(u *carillonv1.User) [][2]string {
	return [][2]string{{"ID", fmtID(u.Id)}, {"Username", u.Username}, {"Role", enumName(u.Role, "ROLE_")},
		{"Groups", fmtIDs(u.GroupIds)}, {"Disabled", fmt.Sprint(u.Disabled)}, {"Last login", fmtTime(u.LastLoginAt)}}
}

const roleHelp = "admin (everything), member (operates the jobs of its groups) or viewer (reads everything)"

func userListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List the users (ADMIN)", Args: exactArgs(0, "no arguments")}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		res, err := e.clients().Users.ListUsers(ctx, &carillonv1.ListUsersRequest{})
		if err != nil {
			return err
		}
		var rows [][]string
		for _, u := range res.Users {
			rows = append(rows, userRow(u))
		}
		return e.print(res, userHeader, rows)
	})
}

// userByName resolves a username or id to a user.
func userByName(ctx context.Context, e *cmdEnv, name string) (*carillonv1.User, error) {
	c := e.clients()
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		res, err := c.Users.GetUser(ctx, &carillonv1.GetUserRequest{Id: id})
		if err != nil {
			return nil, err
		}
		return res.User, nil
	}
	res, err := c.Users.ListUsers(ctx, &carillonv1.ListUsersRequest{})
	if err != nil {
		return nil, err
	}
	for _, u := range res.Users {
		if strings.EqualFold(u.Username, name) {
			return u, nil
		}
	}
	return nil, notFound(fmt.Sprintf("user %q not found", name))
}

func userGetCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "get NAME|ID", Short: "Show a user (ADMIN)", Args: exactArgs(1, "a username or id")}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		u, err := userByName(ctx, e, args[0])
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(&carillonv1.GetUserResponse{User: u})
		}
		return e.printFields(nil, userFields(u))
	})
}

func parseRole(s string) (carillonv1.Role, error) {
	n, err := parseEnum("role", s, carillonv1.Role(0).Descriptor(), "ROLE_")
	return carillonv1.Role(n), err
}

func userCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "create NAME --role ROLE",
		Short:   "Create a user (ADMIN); asks for the password",
		Example: "  carillon user create vera --role viewer\n  carillon user create max --role member --groups 1,2 --password-stdin < pw.txt",
		Args:    exactArgs(1, "a username: carillon user create NAME --role ROLE"),
	}
	role := cmd.Flags().String("role", "", roleHelp+" (required)")
	groups := cmd.Flags().String("groups", "", "member: the group ids they may operate, comma-separated")
	stdin := cmd.Flags().Bool("password-stdin", false, "read the password from the first line of stdin instead of asking")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		u := &carillonv1.User{Username: args[0]}
		var err error
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
		res, err := e.clients().Users.CreateUser(ctx, &carillonv1.CreateUserRequest{User: u, Password: pw[0]})
		if err != nil {
			return err
		}
		return e.print(res, userHeader, [][]string{userRow(res.User)})
	})
}

func userUpdateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update NAME|ID",
		Short: "Change a user's role, groups, state or password (ADMIN)",
		Long: `Change a user: only what the flags give changes. Disabling a user or setting
its password ends its sessions and revokes its API tokens, for good.`,
		Args: exactArgs(1, "a username or id"),
	}
	fs := cmd.Flags()
	role := fs.String("role", "", roleHelp)
	groups := fs.String("groups", "", "member: the group ids they may operate, comma-separated (replaces the list)")
	disable := fs.Bool("disable", false, "disable the user: their sessions and tokens stop working")
	enable := fs.Bool("enable", false, "enable the user again")
	stdin := fs.Bool("password-stdin", false, "set a new password, read from the first line of stdin")
	cmd.MarkFlagsMutuallyExclusive("disable", "enable")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		u, err := userByName(ctx, e, args[0])
		if err != nil {
			return err
		}
		req := &carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: u.Id}, UpdateMask: &fieldmaskpb.FieldMask{}}
		if fs.Changed("role") {
			if req.User.Role, err = parseRole(*role); err != nil {
				return err
			}
			req.UpdateMask.Paths = append(req.UpdateMask.Paths, "role")
			if !fs.Changed("groups") && req.User.Role != carillonv1.Role_ROLE_MEMBER {
				req.UpdateMask.Paths = append(req.UpdateMask.Paths, "group_ids") // clear the grants
			}
		}
		if fs.Changed("groups") {
			if req.User.GroupIds, err = parseIDList("groups", *groups); err != nil {
				return err
			}
			req.UpdateMask.Paths = append(req.UpdateMask.Paths, "group_ids")
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
			return usagef("user update: nothing to change: give --role, --groups, --disable, --enable or --password-stdin")
		}
		if len(req.UpdateMask.Paths) == 0 {
			req.UpdateMask.Paths = []string{"disabled"} // keep everything; only the password changes
			req.User.Disabled = u.Disabled
		}
		res, err := e.clients().Users.UpdateUser(ctx, req)
		if err != nil {
			return err
		}
		return e.print(res, userHeader, [][]string{userRow(res.User)})
	})
}

func userDeleteCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME|ID", Short: "Delete a user (ADMIN)", Args: exactArgs(1, "a username or id")}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		u, err := userByName(ctx, e, args[0])
		if err != nil {
			return err
		}
		res, err := e.clients().Users.DeleteUser(ctx, &carillonv1.DeleteUserRequest{Id: u.Id})
		if err != nil {
			return err
		}
		return e.printDone(res, "deleted user %s", u.Username)
	})
}

func userUnlockCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unlock NAME|ID",
		Short: "Let a user's next logins pass the per-username login limit (ADMIN)",
		Args:  exactArgs(1, "a username or id"),
	}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		u, err := userByName(ctx, e, args[0])
		if err != nil {
			return err
		}
		res, err := e.clients().Users.UnlockUser(ctx, &carillonv1.UnlockUserRequest{Id: u.Id})
		if err != nil {
			return err
		}
		return e.printDone(res, "unlocked user %s: its next logins pass the per-username limit", u.Username)
	})
}

func userPasswdCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "passwd",
		Short: "Change your own password; your other sessions end",
		Args:  exactArgs(0, "no arguments: it changes your own password"),
	}
	stdin := cmd.Flags().Bool("password-stdin", false, "read the current and the new password from the first two lines of stdin")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		pw, err := e.readSecrets(*stdin, "Current password: ", "New password: ")
		if err != nil {
			return err
		}
		res, err := e.clients().Users.ChangePassword(ctx, &carillonv1.ChangePasswordRequest{OldPassword: pw[0], NewPassword: pw[1]})
		if err != nil {
			return err
		}
		return e.printDone(res, "password changed; your other sessions have ended")
	})
}
