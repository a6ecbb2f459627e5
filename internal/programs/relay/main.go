package relay

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Usage is `lab worker relay`'s flags, for its error messages.
const Usage = `lab worker relay [--name N] [--pause-at claim-locked,after-claim,after-publish,after-confirm,after-mark]
   [--db blog_outbox_lab] [--exchange X] [--routing-key K] [--batch 1] [--lease 30]
   [--max-attempts 5] [--backoff 1] [--max-backoff 300] [--scan-delay 10] [--scan-limit 100] [--no-skip-locked] [--ordered]
   [--once | --count N] [--amqp URL|HOST:PORT] [--confirm-timeout 5s] [--quiet] [--worker-name W]
   deliberately unsafe, for lessons: [--unsafe-claim] [--mark-before-publish] [--fresh-message-id] [--no-mandatory]
   [--token fixed-name]`

// Main is `lab worker relay`: one relay process. Service addresses and the
// namespace come from the environment the lab passes (LAB_MYSQL_DSN,
// LAB_AMQP_URL, LAB_NAMESPACE); names on the command line are the article's
// and get the namespace here.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	fs := flag.NewFlagSet("lab worker relay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg Config
	db := fs.String("db", services.OutboxDB, "outbox database (article name)")
	fs.StringVar(&cfg.Exchange, "exchange", "", "exchange (article name; \"\" is the default exchange)")
	fs.StringVar(&cfg.RoutingKey, "routing-key", "orders", "routing key; with the default exchange, a queue name (article name)")
	fs.IntVar(&cfg.Batch, "batch", 1, "events per claim")
	fs.IntVar(&cfg.LeaseSeconds, "lease", 30, "lease seconds")
	fs.IntVar(&cfg.MaxAttempts, "max-attempts", 5, "attempts before DEAD")
	fs.IntVar(&cfg.BackoffSeconds, "backoff", 1, "first retry delay in seconds (doubles per attempt)")
	fs.IntVar(&cfg.MaxBackoff, "max-backoff", maxBackoffSeconds, "the longest retry delay in seconds")
	fs.IntVar(&cfg.ScanDelay, "scan-delay", 10, "seconds a lease-expired event waits before it is due again")
	fs.IntVar(&cfg.ScanLimit, "scan-limit", 100, "claims one lease-expiry scan resets at most")
	fs.StringVar(&cfg.WorkerName, "worker-name", "", "the worker this relay runs as, in its lease tokens (default: --name); relays may share one, as threads or restarts of one worker do")
	token := fs.String("token", "per-claim", "lease token: per-claim (WORKER-RANDOM, fresh on every claim), or fixed-name: UNSAFE, the worker name on every claim, so a stale write-back matches a newer claim of the same worker")
	noSkip := fs.Bool("no-skip-locked", false, "claim with plain FOR UPDATE")
	fs.BoolVar(&cfg.Ordered, "ordered", false, "one event in flight per aggregate")
	fs.BoolVar(&cfg.Once, "once", false, "one pass, then exit")
	fs.IntVar(&cfg.Count, "count", 0, "exit after N events finished (SENT, DEAD or claim lost)")
	amqpURL := fs.String("amqp", "", "broker URL, or HOST:PORT to reach the same broker another way (a fault proxy)")
	confirmWait := 5 * time.Second
	if replaying() {
		confirmWait = 2 * time.Second // replay shortens waits; a lost confirm still times out
	}
	fs.DurationVar(&cfg.ConfirmTimeout, "confirm-timeout", confirmWait, "how long to wait for a publisher confirm")
	fs.DurationVar(&cfg.Poll, "poll", 200*time.Millisecond, "idle wait when nothing is due")
	quiet := fs.Bool("quiet", false, "do not log each claim statement")
	fs.BoolVar(&cfg.UnsafeClaim, "unsafe-claim", false, "UNSAFE: claim with a plain SELECT and ignore the UPDATE's rows affected")
	fs.BoolVar(&cfg.MarkBeforePublish, "mark-before-publish", false, "UNSAFE: mark SENT, then publish (at most once)")
	fs.BoolVar(&cfg.FreshMessageID, "fresh-message-id", false, "UNSAFE: a new message id on every attempt")
	fs.BoolVar(&cfg.NoMandatory, "no-mandatory", false, "UNSAFE: publish without mandatory (unroutable events are dropped)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return worker.FlagError("lab worker relay", fs, err)
		}
		return fmt.Errorf("%v\nusage: %s", err, Usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\nusage: %s", fs.Arg(0), Usage)
	}
	switch *token {
	case "per-claim":
	case "fixed-name":
		cfg.FixedToken = true
	default:
		return fmt.Errorf("--token %s: want per-claim or fixed-name\nusage: %s", *token, Usage)
	}
	cfg.SkipLocked = !*noSkip
	cfg.Verbose = !*quiet
	cfg.Name = p.Name
	svc := services.Config{}.FromEnv()
	names := services.Names{NS: svc.Namespace}
	cfg.Exchange = names.Name(cfg.Exchange)
	if cfg.Exchange == "" {
		cfg.RoutingKey = names.Name(cfg.RoutingKey) // the default exchange routes by queue name
	}
	target, err := BrokerURL(svc.AMQP, *amqpURL)
	if err != nil {
		return err
	}
	pool, err := services.Open(ctx, svc.MySQL, names.Name(*db))
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := EnsureColumns(ctx, pool); err != nil {
		return err
	}
	conn, err := services.OpenAMQP(ctx, target)
	if err != nil {
		return err
	}
	defer conn.Close()
	r, err := New(cfg, pool, conn, p)
	if err != nil {
		return err
	}
	defer r.Close()
	if *amqpURL != "" {
		p.Logf("%s: connected to the broker through %s", cfg.Name, secret.URL(target))
	}
	if err := r.Run(ctx); err != nil {
		return err
	}
	c := r.Counts()
	unclaimed := ""
	if c.Unclaimed > 0 {
		unclaimed = fmt.Sprintf(", published without a claim %d", c.Unclaimed)
	}
	// The scan is one UPDATE whose rows go to NEW, or to DEAD past the
	// maximum attempts: its count covers both, so DEAD here is the relay's
	// own write-backs only, and the line says so.
	p.Logf("%s: done: published %d, SENT %d, retried %d, DEAD after a failed publish %d, claims lost %d, expired claims the scan moved (to NEW, or DEAD past %d attempts) %d%s",
		cfg.Name, c.Published, c.Sent, c.Retried, c.Dead, c.Lost, cfg.MaxAttempts, c.Rescued, unclaimed)
	return nil
}

// BrokerURL is the URL to dial: override as given when it is a URL; when it
// is HOST:PORT, base with its host replaced, so credentials never need to
// appear on a command line a lesson shows.
func BrokerURL(base, override string) (string, error) {
	if override == "" {
		return base, nil
	}
	if strings.Contains(override, "://") {
		return override, nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", &lab.Error{What: "cannot combine --amqp " + override + " with the broker URL", Where: secret.URL(base),
			Fix: "pass a full URL: --amqp amqp://user:password@host:port/"}
	}
	u.Host = override
	return u.String(), nil
}

// replaying reports whether the lab runs headless (LAB_REPLAY=1).
func replaying() bool { return os.Getenv("LAB_REPLAY") == "1" }

// CreateDatabase recreates the article's outbox database under names (only
// dropping one the lab created), adds the relay's columns and marks it as
// the lab's; tests and the benchmark start from it. It returns the
// namespaced name.
func CreateDatabase(ctx context.Context, server *sql.DB, names services.Names) (string, error) {
	return services.Recreate(ctx, server, names, services.OutboxDB, FileColumns)
}
