// Command edgecms runs the edgecms content delivery service and its
// administrative commands. It only reads configuration and wires packages
// together; see the README for the commands and their configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/logging"
)

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, cfg config, fs *flag.FlagSet, log *slog.Logger) error
	flags               func(fs *flag.FlagSet)
	// noConfig: the command reads only its own flags, not the service
	// configuration (which it has no use for, and whose errors would
	// stop it).
	noConfig bool
	// positional: the command reads arguments after its flags itself;
	// any other refuses them (a stray word is a mistake, such as a flag
	// written without its dashes).
	positional bool
}

var commands []command

func init() {
	commands = []command{
		{name: "serve", summary: "run everything in one process: edge on --addr, origin behind it, publisher, scheduler, webhook dispatcher (the embedded default)", run: runServe},
		{name: "origin", summary: "run the origin only: management API, Fetch API misses and preview, and a scheduler (any number may run)", run: runOrigin},
		{name: "edge", summary: "run an edge only, without a database: serve published objects from the store, forward the rest to EDGECMS_ORIGIN_URL", run: runEdge},
		{name: "dispatcher", summary: "run a webhook dispatcher only: queue, sign, send and retry webhook deliveries (any number may run)", run: runDispatcher, flags: dispatcherFlags},
		{name: "publisher", summary: "run a publisher only: render published content into the object store (any number may run)", run: runPublisher},
		{name: "republish", args: "--guid G", summary: "render every object of an instance into the object store again, with a progress bar", run: runRepublish, flags: republishFlags},
		{name: "verify", args: "--guid G", summary: "compare every object of an instance in the store with a fresh render; list what differs, is missing or extra (exit 1 if any)", run: runVerify, flags: verifyFlags},
		{name: "migrate", summary: "apply the database schema", run: runMigrate},
		{name: "export", args: "--guid G [-o FILE]", summary: "write an instance, with its asset bytes, to one archive (tar of JSON Lines; .gz compresses)", run: runExport, flags: exportFlags},
		{name: "import", args: "[--guid NEW] FILE", summary: "read an archive into a new instance, render it into the store; print what was imported", run: runImport, flags: importFlags, positional: true},
		{name: "instance create", args: "--guid G --locales en-us,fr-ca", summary: "create an instance; print {guid, managementToken, fetchKey, previewKey}", run: runInstanceCreate, flags: instanceFlags},
		{name: "demo", args: "--guid G", summary: "create (if missing) and fill an instance with a published sample site; print its keys and a demo user's email and password", run: runDemo, flags: instanceFlags},
		{name: "user create", args: "--email E [--operator]", summary: "create a user (password from EDGECMS_USER_PASSWORD, or asked on a terminal); print the user", run: runUserCreate, flags: userCreateFlags},
		{name: "user grant", args: "--email E --guid G --role R", summary: "give a user a role (edit, publish, manage, full) on an instance", run: runUserGrant, flags: userGrantFlags},
		{name: "user list", summary: "list the users with their instances and roles", run: runUserList},
		{name: "user delete", args: "--email E", summary: "delete a user, with the user's roles and sessions", run: runUserDelete, flags: userEmailFlag},
		{name: "health", args: "[--ready]", summary: "probe the admin server of a running role (/livez, or /readyz with --ready); exit 0 when it answers 200 (a Docker HEALTHCHECK)", run: runHealth, flags: healthFlags, noConfig: true},
		{name: "version", summary: "print the version and build information (also edgecms --version)", run: runVersion, noConfig: true},
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: edgecms <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'edgecms <command> --help' for a command's flags and configuration.")
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			os.Exit(2)
		}
		return
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	cmd, rest, ok := findCommand(args)
	if !ok {
		fmt.Fprintf(os.Stderr, "edgecms: unknown command %q\n", args[0])
		usage()
		os.Exit(2)
	}
	fs := flag.NewFlagSet("edgecms "+cmd.name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: edgecms %s %s\n\n%s\n", cmd.name, cmd.args, cmd.summary)
		if cmd.noConfig {
			fmt.Fprintln(os.Stderr, "\nflags:")
		} else {
			fmt.Fprintln(os.Stderr, "\nflags (each also read from the environment variable named; defaults shown are the built-in ones):")
		}
		fs.PrintDefaults()
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	// Connections, not the open-file limit, should run out first; the
	// connection caps' defaults are taken from the raised limit.
	if _, err := guard.RaiseFileLimit(); err != nil {
		fmt.Fprintf(os.Stderr, "edgecms: could not raise the open-file limit: %v\n", err)
	}
	var cfg config
	var err error
	if cmd.noConfig {
		err = fs.Parse(rest)
		cfg.LogFormat, cfg.LogLevel = logging.Text, "info"
	} else {
		cfg, err = loadConfig(fs, rest)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil && fs.NArg() > 0 && !cmd.positional {
		err = fmt.Errorf("unexpected argument %q (flags are written --name value)", fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "edgecms %s: %v\n", cmd.name, err)
		os.Exit(2)
	}
	log, err := logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "edgecms %s: %v\n", cmd.name, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.run(ctx, cfg, fs, log); err != nil {
		fmt.Fprintf(os.Stderr, "edgecms %s: %v\n", cmd.name, err)
		os.Exit(1)
	}
}

func findCommand(args []string) (command, []string, bool) {
	for _, c := range commands {
		if len(args) >= 2 && c.name == args[0]+" "+args[1] {
			return c, args[2:], true
		}
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c, args[1:], true
		}
	}
	return command{}, nil, false
}
