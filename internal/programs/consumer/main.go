package consumer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Options are the consumer's flags.
type Options struct {
	Strategy Strategy
	Consumer string
	Effect   Effect
	DB       string // article name; the namespace is added
	TTL      time.Duration
	// One message from flags.
	Msg Message
	// Or a queue.
	Queue    string
	Count    int
	Ack      string // after-commit | before-commit
	Prefetch int
	// A poison message: the consumer fails on the delivery whose event id
	// is Poison, whatever it holds, and settles it as OnPoison says.
	Poison   string
	OnPoison string // nack-requeue | nack | reject
	// An ordinary failure: the handler fails on these event ids (a
	// downstream that is down) until a consumer without them runs.
	Fail       []string
	OnFailure  string // requeue | reject
	MaxRetries int    // 0: retry forever
	ParkQueue  string // where a message that used its retries goes
	// Concurrency handlers side by side (a thread pool); Slow makes the
	// handling of some events take longer (a slow call), by event id.
	Concurrency int
	Slow        map[string]time.Duration
	// FollowUp: a queue the consumer publishes the next stage's message to
	// (with a confirm, after its commit, before its ack), for the messages
	// FollowUpOn says (handled | applied).
	FollowUp   string
	FollowUpOn string
}

// PoisonModes are how the consumer settles a poison message: nack with
// requeue (it comes back, forever), nack or reject without requeue (the
// broker dead-letters it when the queue has a dead-letter exchange, else
// drops it).
var PoisonModes = []string{"nack-requeue", "nack", "reject"}

// ParseArgs reads the consumer's flags (the worker layer has taken --name and
// --pause-at off already).
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("lab worker consumer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	strategy := fs.String("strategy", "", "one of: "+strategyList())
	fs.StringVar(&o.Consumer, "consumer", "points-award", "consumer_name of the mark")
	effect := fs.String("effect", string(EffectPoints), "points, sms-task or order-view")
	fs.StringVar(&o.DB, "db", services.IdempotencyDB, "article database name (namespace added)")
	ttl := fs.Int("ttl", 3600, "Redis mark lifetime in seconds")
	fs.StringVar(&o.Msg.EventID, "event", "", "event (message) id")
	fs.StringVar(&o.Msg.BusinessKey, "key", "", "business key, e.g. order:42:paid")
	fs.Int64Var(&o.Msg.UserID, "user", 0, "user id")
	fs.Int64Var(&o.Msg.Amount, "amount", 0, "points to award")
	fs.Int64Var(&o.Msg.OrderID, "order", 0, "order id (order-view)")
	fs.Int64Var(&o.Msg.Version, "version", 0, "the order's version in this event (order-view)")
	fs.StringVar(&o.Msg.Status, "status", "", "the order's status in this event (order-view)")
	fs.StringVar(&o.Queue, "queue", "", "consume this queue (article name; namespace added)")
	fs.IntVar(&o.Count, "count", 0, "stop after N deliveries (0: until SIGTERM)")
	fs.StringVar(&o.Ack, "ack", "after-commit", "after-commit or before-commit")
	fs.IntVar(&o.Prefetch, "prefetch", 1, "basic.qos prefetch count")
	fs.StringVar(&o.Poison, "poison", "", "fail on the message with this event id (--queue only; pause point poisoned)")
	fs.StringVar(&o.OnPoison, "on-poison", "nack-requeue", "settle the poison message: "+strings.Join(PoisonModes, ", "))
	fail := fs.String("fail", "", "fail on these event ids (comma-separated): an ordinary failure, retried (--queue only; pause point failed)")
	fs.StringVar(&o.OnFailure, "on-failure", "requeue", "settle a failed delivery: "+strings.Join(FailureModes, ", ")+" (to the queue's dead-letter exchange)")
	fs.IntVar(&o.MaxRetries, "max-retries", 0, "retries before a failed message is parked (the broker's count: x-delivery-count or x-death); 0: no cap")
	fs.StringVar(&o.ParkQueue, "park-queue", "", "with --max-retries: the queue a message that used its retries is moved to (article name)")
	fs.IntVar(&o.Concurrency, "concurrency", 1, "handlers side by side, each with one delivery (a thread pool); prefetch is raised to match")
	fs.StringVar(&o.FollowUp, "follow-up", "", "publish each handled message's follow-up to this queue (article name; --queue only; points before-follow-up, after-follow-up)")
	fs.StringVar(&o.FollowUpOn, "follow-up-on", "handled", "which messages get a follow-up: handled (applied or absorbed as a duplicate) or applied (a redelivery that meets the mark sends none)")
	slow := fs.String("slow", "", "EVENT_ID=DURATION[,…]: handling these events waits that long first (a slow call)")
	if err := fs.Parse(args); err != nil {
		return o, worker.FlagError("lab worker consumer", fs, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("lab worker consumer: unexpected argument %q", fs.Arg(0))
	}
	o.Strategy, o.Effect = Strategy(*strategy), Effect(*effect)
	if *fail != "" {
		o.Fail = strings.Split(*fail, ",")
	}
	if *slow != "" {
		o.Slow = map[string]time.Duration{}
		for _, part := range strings.Split(*slow, ",") {
			id, ds, ok := strings.Cut(part, "=")
			d, err := time.ParseDuration(ds)
			if !ok || id == "" || err != nil || d < 0 {
				return o, fmt.Errorf("lab worker consumer: --slow %q: write EVENT_ID=DURATION, e.g. order-42-v1=1s", part)
			}
			o.Slow[id] = d
		}
	}
	if o.Concurrency > o.Prefetch {
		o.Prefetch = o.Concurrency // a handler with nothing to take would sit idle
	}
	o.TTL = time.Duration(*ttl) * time.Second
	switch {
	case *strategy == "":
		return o, fmt.Errorf("lab worker consumer: --strategy is required (%s)", strategyList())
	case !o.Strategy.valid():
		return o, fmt.Errorf("lab worker consumer: unknown --strategy %q (known: %s)", *strategy, strategyList())
	case !o.Effect.valid():
		return o, fmt.Errorf("lab worker consumer: --effect %q: use points, sms-task or order-view", *effect)
	case fits(o.Strategy, o.Effect) != nil:
		return o, fmt.Errorf("lab worker consumer: %v", fits(o.Strategy, o.Effect))
	case o.Ack != "after-commit" && o.Ack != "before-commit":
		return o, fmt.Errorf("lab worker consumer: --ack %q: use after-commit or before-commit", o.Ack)
	case *ttl < 1:
		return o, fmt.Errorf("lab worker consumer: --ttl must be at least 1 second")
	case o.Prefetch < 1:
		return o, fmt.Errorf("lab worker consumer: --prefetch must be at least 1")
	case !slices.Contains(PoisonModes, o.OnPoison):
		return o, fmt.Errorf("lab worker consumer: --on-poison %q: use %s", o.OnPoison, strings.Join(PoisonModes, ", "))
	case !slices.Contains(FailureModes, o.OnFailure):
		return o, fmt.Errorf("lab worker consumer: --on-failure %q: use %s", o.OnFailure, strings.Join(FailureModes, ", "))
	case o.Concurrency < 1:
		return o, fmt.Errorf("lab worker consumer: --concurrency must be at least 1")
	case o.Concurrency > 1 && o.Queue == "":
		return o, fmt.Errorf("lab worker consumer: --concurrency needs --queue: handlers share a queue's deliveries")
	case o.MaxRetries < 0:
		return o, fmt.Errorf("lab worker consumer: --max-retries must be 0 (no cap) or more")
	case o.MaxRetries > 0 && o.ParkQueue == "":
		return o, fmt.Errorf("lab worker consumer: --max-retries needs --park-queue Q: a message that used its retries must go somewhere a person sees it")
	case o.ParkQueue != "" && o.MaxRetries == 0:
		return o, fmt.Errorf("lab worker consumer: --park-queue needs --max-retries N: without a cap nothing is ever parked")
	case (len(o.Fail) > 0 || o.MaxRetries > 0) && o.Queue == "":
		return o, fmt.Errorf("lab worker consumer: --fail and --max-retries need --queue: a retry is the broker delivering the message again")
	case !validFollowUpOn(o.FollowUpOn):
		return o, fmt.Errorf("lab worker consumer: --follow-up-on %q: use %s", o.FollowUpOn, strings.Join(FollowUpModes, " or "))
	case o.FollowUp != "" && o.Queue == "":
		return o, fmt.Errorf("lab worker consumer: --follow-up needs --queue: the follow-up goes out before the delivery's ack")
	case o.Poison != "" && o.Queue == "":
		return o, fmt.Errorf("lab worker consumer: --poison needs --queue: a poison message is one a queue keeps delivering")
	}
	if o.Queue == "" {
		var miss []string
		if o.Msg.EventID == "" {
			miss = append(miss, "--event")
		}
		// The flags are named after the JSON fields, except these.
		flagOf := map[string]string{"business_key": "key", "user_id": "user", "orderId": "order"}
		for _, f := range o.Msg.lacks(o.Effect) {
			if n, ok := flagOf[f]; ok {
				f = n
			}
			miss = append(miss, "--"+f)
		}
		if len(miss) > 0 {
			return o, fmt.Errorf("lab worker consumer: give one message (%s missing) or --queue NAME", strings.Join(miss, ", "))
		}
	}
	return o, nil
}

// Main is `lab worker consumer`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	o, err := ParseArgs(args)
	if err != nil {
		return err
	}
	cfg := services.Config{}.FromEnv()
	names := services.Names{NS: cfg.Namespace}
	c, closeAll, err := Open(ctx, cfg, o)
	if err != nil {
		return err
	}
	defer closeAll()
	c.P = p
	if o.Queue == "" {
		p.Logf("%s (%s) received %s", o.Consumer, o.Strategy, o.Msg)
		res, err := c.Handle(ctx, o.Msg, nil)
		if err != nil {
			return err
		}
		p.Logf("%s", res.Detail)
		if res.Outcome == Conflict {
			return &ConflictError{Detail: "conflict recorded; the message is not done"}
		}
		return nil
	}
	return c.Consume(ctx, cfg, names.Name(o.Queue), o)
}

// Open connects to the database (and Redis for the redis strategies) the
// way a worker does: addresses from the environment, names namespaced.
func Open(ctx context.Context, cfg services.Config, o Options) (*Consumer, func(), error) {
	names := services.Names{NS: cfg.Namespace}
	dbName := names.Name(o.DB)
	db, err := services.OpenDB(ctx, cfg, o.DB)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(4)
	pc, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := &Consumer{DB: db, DBName: dbName, Name: o.Consumer, Strategy: o.Strategy, Effect: o.Effect, TTL: o.TTL, NS: cfg.Namespace,
		RedisKey: func(consumer, key string) string { return RedisKey(cfg.Namespace, consumer, key) }}
	closeAll := func() { db.Close() }
	if o.Strategy.usesRedis() {
		rc := redis.NewClient(services.RedisOptions(cfg.Redis))
		if err := rc.Ping(pc).Err(); err != nil {
			rc.Close()
			db.Close()
			return nil, nil, fmt.Errorf("strategy %s needs Redis, which does not answer at %s: %v (start it, or set LAB_REDIS_ADDR)", o.Strategy, secret.Addr(cfg.Redis), err)
		}
		c.Redis = rc
		closeAll = func() { rc.Close(); db.Close() }
	}
	return c, closeAll, nil
}

// RedisKey is the consumer's Redis mark for a business key, namespaced as
// the lab's redis steps namespace "lab:" keys, so a lesson can write
// lab:dedup:points-award:order:42:paid.
func RedisKey(ns, consumer, businessKey string) string {
	return services.Names{NS: ns}.RedisKey("lab:dedup:" + consumer + ":" + businessKey)
}
