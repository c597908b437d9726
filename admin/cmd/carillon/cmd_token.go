package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func tokenCmd(e *cmdEnv) *cobra.Command {
	return noun("token", "API tokens, for scripts and curl", tokenCreateCmd(e), tokenListCmd(e), tokenRevokeCmd(e))
}

// tokenCreateCmd prints only the token on stdout, so that
// TOKEN=$(carillon token create ci) works.
func tokenCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an API token of yours; prints it alone on stdout, shown only now",
		Long: `Create an API token with your role and groups. The token alone goes to stdout
(shown only now), what it is to stderr. In a script, assign and export it in
two steps, so that a failure stops the script instead of exporting an empty
token:

  CARILLON_API_TOKEN=$(carillon token create ci) && export CARILLON_API_TOKEN`,
		Args: exactArgs(1, "a name: carillon token create NAME"),
	}
	expires := cmd.Flags().Duration("expires", 0, "lifetime, e.g. 720h (default: never expires)")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		if *expires < 0 {
			return usagef("--expires: must not be negative")
		}
		res, err := e.clients().Users.CreateApiToken(ctx, &carillonv1.CreateApiTokenRequest{
			Name: args[0], ExpiresInSeconds: int64(expires.Round(time.Second) / time.Second),
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
	})
}

func tokenListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List your API tokens (not the tokens themselves)", Args: exactArgs(0, "no arguments")}
	all := cmd.Flags().Bool("all", false, "every user's tokens (ADMIN)")
	user := cmd.Flags().String("user", "", "this user's tokens, by name or id (ADMIN)")
	cmd.MarkFlagsMutuallyExclusive("all", "user")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		req := &carillonv1.ListApiTokensRequest{AllUsers: *all}
		if *user != "" {
			u, err := userByName(ctx, e, *user)
			if err != nil {
				return err
			}
			req.UserId = u.Id
		}
		res, err := e.clients().Users.ListApiTokens(ctx, req)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, t := range res.ApiTokens {
			rows = append(rows, []string{fmtID(t.Id), t.Name, t.Username, fmtTime(t.CreatedAt), fmtTime(t.ExpiresAt), fmtTime(t.LastUsedAt)})
		}
		return e.print(res, []string{"ID", "NAME", "USER", "CREATED", "EXPIRES", "LAST USED"}, rows)
	})
}

func tokenRevokeCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "revoke ID", Short: "Revoke an API token (its id: carillon token list)", Args: exactArgs(1, "a token id (carillon token list)")}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("token", args[0])
		if err != nil {
			return err
		}
		res, err := e.clients().Users.RevokeApiToken(ctx, &carillonv1.RevokeApiTokenRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "revoked API token %d", id)
	})
}
