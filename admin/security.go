package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
)

const (
	// FirstAdminUsername is the user created on first start.
	FirstAdminUsername = "admin"
	// executorTokenSetting names the generated executor token in settings.
	executorTokenSetting = "executor_token"
	// demoTokenName names the API token --demo creates on every start.
	demoTokenName = "demo"
)

// ErrConfig is returned, wrapped with the reason, by Open for a Config it
// cannot run with.
var ErrConfig = errors.New("admin: config")

// secure settles the credentials before anything serves: the executor
// token in force (from Config.Token, from the database, or generated now
// and stored, unless Config.Insecure), and the first ADMIN when there is no
// user yet. Secrets generated here are printed once, to cfg.Console
// (never with cfg.HideSecrets); the logger never sees them.
func secure(ctx context.Context, st *store.Store, cfg *Config) (generated bool, err error) {
	now := time.Now()
	switch {
	case cfg.Token != "":
	case cfg.Insecure:
		cfg.Logger.Warn("INSECURE: no executor access token: anyone who reaches this port can register executors and report results, " +
			"and executors accept runs from anyone (--insecure)")
	default:
		token, stored, err := st.Settings.Init(ctx, executorTokenSetting, auth.NewExecutorToken(), now)
		if err != nil {
			return false, err
		}
		cfg.Token, generated = token, true
		switch {
		case !stored:
		case cfg.HideSecrets:
			cfg.Logger.Info("first start: generated an executor access token and stored it in the database; executors must send it "+
				"(sdk.Config.AccessToken; CARILLON_TOKEN for examples/executor); an ADMIN reads it with: carillon executor-token",
				"db", store.Redact(cfg.DBPath))
		default:
			fmt.Fprintf(cfg.Console, "\ncarillon: generated an executor access token and stored it in %s.\n"+
				"  Executors must send it (sdk.Config.AccessToken; CARILLON_TOKEN for examples/executor).\n"+
				"  An ADMIN reads it with:  carillon executor-token\n\n", store.Redact(cfg.DBPath))
		}
	}

	n, err := st.Users.Count(ctx)
	if err != nil {
		return generated, err
	}
	if n > 0 {
		if cfg.AdminPassword != "" {
			cfg.Logger.Warn("admin password ignored: users exist already (it only sets the first ADMIN's password on first start)")
		}
		return generated, nil
	}
	password, shown := cfg.AdminPassword, false
	if password == "" && cfg.HideSecrets {
		// A generated password would be shown nowhere: leave the first
		// ADMIN to a start that shows it, or to the password's owner.
		cfg.Logger.Warn("first start: no user yet, and no ADMIN created: its generated password would be printed once, "+
			"but this admin's output is not a terminal (it may be collected into logs). Set CARILLON_ADMIN_PASSWORD "+
			"(or --admin-password) and start again, start it once in a terminal, or, with the admin stopped, run: "+
			"carillon reset-admin-password --db "+store.Redact(cfg.DBPath), "user", FirstAdminUsername)
		return generated, nil
	}
	if password == "" {
		password, shown = auth.GeneratePassword(), true
	}
	hash, err := auth.HashPassword(password, cfg.PasswordCost)
	if err != nil {
		return generated, fmt.Errorf("%w: admin password: %w", ErrConfig, err)
	}
	if _, err := st.Users.Create(ctx, store.User{Username: FirstAdminUsername, PasswordHash: hash, Role: auth.RoleAdmin}, now); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) { // another admin sharing the database created it first
			return generated, nil
		}
		return generated, err
	}
	if shown {
		fmt.Fprintf(cfg.Console, "\ncarillon: first start: created the ADMIN user %q with this password, shown only this once:\n\n"+
			"    %s\n\n"+
			"  Log in with:  carillon login --user %s\n"+
			"  then change it with:  carillon user passwd\n\n", FirstAdminUsername, password, FirstAdminUsername)
	} else {
		cfg.Logger.Info("first start: created the ADMIN user with the password you set", "user", FirstAdminUsername)
	}
	return generated, nil
}

// printDemoAccess creates a fresh API token for the first ADMIN, revoking
// the previous demo one, and prints ready commands that use it. Demo only:
// the token is printed on every start so a newcomer can use the API at
// once.
func printDemoAccess(ctx context.Context, st *store.Store, w io.Writer, baseURL, dbPath string) error {
	users, err := st.Users.List(ctx)
	if err != nil {
		return err
	}
	var admin store.User
	for _, u := range users {
		if u.Role == auth.RoleAdmin && !u.Disabled && (admin.ID == 0 || u.ID < admin.ID) {
			admin = u
		}
	}
	if admin.ID == 0 {
		return errors.New("admin: demo: no enabled ADMIN user")
	}
	tokens, err := st.Auth.Tokens(ctx, admin.ID)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		if t.Name == demoTokenName {
			if err := st.Auth.DeleteToken(ctx, t.ID); err != nil {
				return err
			}
		}
	}
	token, hash := auth.NewAPIToken()
	if _, err := st.Auth.CreateToken(ctx, store.APIToken{UserID: admin.ID, Name: demoTokenName, TokenHash: hash}, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncarillon demo: an API token of user %q (replaced on every demo start; of this demo's database only:\n"+
		"unset CARILLON_API_TOKEN before you use another admin or database):\n\n"+
		"    export CARILLON_API_TOKEN=%s\n\n"+
		"  List the runs with curl:\n"+
		"    curl -s -H \"Authorization: Bearer $CARILLON_API_TOKEN\" -H 'Content-Type: application/json' -d '{\"pageSize\":3}' %s/carillon.v1.RunService/ListRuns\n"+
		"  or with the CLI:\n"+
		"    carillon run list --server %s     (the CLI: go install ./admin/cmd/carillon)\n"+
		"  or open the web console at %s/ and sign in as %q with the password printed at this database's\n"+
		"  first start (lost it? stop the demo and run: carillon reset-admin-password --db %s)\n\n",
		admin.Username, token, baseURL, baseURL, baseURL, admin.Username, dbPath)
	return nil
}
