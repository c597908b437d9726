package main

import (
	"context"
	"fmt"
	"path/filepath"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// cmdLogin logs in and saves the server and session token in the config file.
func cmdLogin(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("login")
	user := fs.String("user", "", "username (required)")
	stdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin instead of asking")
	if _, err := e.parse(fs, args, 0, "no arguments: carillon login --user NAME"); err != nil {
		return err
	}
	if *user == "" {
		return usagef("login: --user is required")
	}
	pw, err := e.readSecrets(*stdin, "Password for "+*user+": ")
	if err != nil {
		return err
	}
	res, err := e.clients().user.Login(ctx, &carillonv1.LoginRequest{Username: *user, Password: pw[0]})
	if err != nil {
		return err
	}
	caFile := e.caFile
	if caFile != "" {
		if caFile, err = filepath.Abs(caFile); err != nil {
			return err
		}
	}
	path, err := e.saveConfig(config{Server: e.server, Token: res.Token, CAFile: caFile})
	if err != nil {
		return err
	}
	if e.json {
		res.Token = "" // it is in the config file; keep it off the screen
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "logged in to %s as %s (%s) until %s; session saved in %s\n",
		e.server, res.User.Username, enumName(res.User.Role, "ROLE_"), fmtTime(res.ExpiresAt), path)
	return nil
}

// cmdLogout ends the saved session and removes it from the config file.
func cmdLogout(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("logout")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	if e.config.Token == "" || e.config.Server != e.server {
		return usagef("logout: no saved session for %s", e.server)
	}
	e.token = e.config.Token
	_, err := e.clients().user.Logout(ctx, &carillonv1.LogoutRequest{})
	if err != nil && connect.CodeOf(err) != connect.CodeUnauthenticated { // an expired session is gone anyway
		return err
	}
	if _, err := e.saveConfig(config{Server: e.server, CAFile: e.config.CAFile}); err != nil {
		return err
	}
	fmt.Fprintf(e.io.out, "logged out of %s\n", e.server)
	return nil
}

// cmdWhoami prints the caller's user.
func cmdWhoami(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("whoami")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().user.GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
	if err != nil {
		return err
	}
	return e.printFields(res, userFields(res.User))
}
