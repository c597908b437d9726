package main

import (
	"context"
	"fmt"
	"path/filepath"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// loginCmd logs in and saves the server and session token in the config
// file.
func loginCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "login --user NAME",
		Short: "Log in to an admin; later commands use the saved session",
		Long: `Log in to an admin and save the server, the session (valid 24 hours) and the
CA file in the config file, readable by you only. Later commands to the same
server use the session, unless --api-token or CARILLON_API_TOKEN give another
credential: those take precedence, and login warns when CARILLON_API_TOKEN is
set.`,
		Example: "  carillon login --server http://127.0.0.1:8080 --user admin\n  printf '%s\\n' \"$PASSWORD\" | carillon login --user admin --password-stdin",
		Args:    exactArgs(0, "no arguments: carillon login --user NAME"),
	}
	user := cmd.Flags().String("user", "", "username (required)")
	stdin := cmd.Flags().Bool("password-stdin", false, "read the password from the first line of stdin instead of asking")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		if *user == "" {
			return usagef("login: --user is required")
		}
		pw, err := e.readSecrets(*stdin, "Password for "+*user+": ")
		if err != nil {
			return err
		}
		res, err := e.anonymous().Users.Login(ctx, &carillonv1.LoginRequest{Username: *user, Password: pw[0]})
		if err != nil {
			return err
		}
		caFile := e.caFile
		if caFile != "" {
			if caFile, err = filepath.Abs(e.proc.path(caFile)); err != nil {
				return err
			}
		}
		if err := e.saveConfig(config{Server: e.server, Token: res.Token, CAFile: caFile}); err != nil {
			return err
		}
		if e.proc.getenv(envAPIToken) != "" {
			fmt.Fprintf(e.io.err, "carillon: warning: %s is set in your environment and takes precedence over this session; "+
				"unset %s to use the session\n", envAPIToken, envAPIToken)
		}
		if e.json {
			res.Token = "" // it is in the config file; keep it off the screen
			return e.printJSON(res)
		}
		fmt.Fprintf(e.io.out, "logged in to %s as %s (%s) until %s; session saved in %s\n",
			e.server, res.User.Username, enumName(res.User.Role, "ROLE_"), fmtTime(res.ExpiresAt), e.configFile)
		return nil
	})
}

// logoutCmd ends the saved session and removes it from the config file.
func logoutCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "End the session carillon login saved",
		Args:  exactArgs(0, "no arguments"),
	}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		if e.config.Token == "" || e.config.Server != e.server {
			return usagef("logout: no saved session for %s in %s", e.server, e.configFile)
		}
		e.token, e.tokenFrom = e.config.Token, "session"
		_, err := e.clients().Users.Logout(ctx, &carillonv1.LogoutRequest{})
		if err != nil && connect.CodeOf(err) != connect.CodeUnauthenticated { // an expired session is gone anyway
			return err
		}
		if err := e.saveConfig(config{Server: e.server, CAFile: e.config.CAFile}); err != nil {
			return err
		}
		fmt.Fprintf(e.io.out, "logged out of %s\n", e.server)
		return nil
	})
}

// whoamiCmd prints the caller's user.
func whoamiCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Print the user your credential belongs to",
		Args:  exactArgs(0, "no arguments"),
	}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		res, err := e.clients().Users.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
		if err != nil {
			return err
		}
		return e.printFields(res, userFields(res.User))
	})
}
