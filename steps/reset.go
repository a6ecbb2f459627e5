package steps

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/services"
	labsql "github.com/rmlab/lab/sql"
)

// resetHook clears what one part of the lab created (the broker part
// deletes its queues this way). It returns lines for the transcript.
type resetHook func(ctx context.Context, r *Run, s *lab.Step) ([]string, error)

var (
	hooksMu sync.Mutex
	hooks   []resetHook
)

// registerResetHook adds a hook every reset step runs.
func registerResetHook(h resetHook) {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	hooks = append(hooks, h)
}

// resetKind puts the lesson's world back to the article's starting point:
// workers killed, sessions rolled back, the named databases dropped (only if
// the lab created them) and recreated from sql/, Redis keys with the lab's
// prefix deleted, and whatever registered hooks clear.
//
//	```reset db=blog_idempotency_lab[,blog_outbox_lab] [redis=lab:*]
//	```
type resetKind struct{}

func (resetKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "db", "redis", "queues", "exchanges"); err != nil {
		return err
	}
	for _, db := range SplitList(s.Attrs["db"]) {
		if labsql.Schema(db) == "" {
			return fmt.Errorf("%s: reset db=%s is not one of the article's databases%s; use blog_idempotency_lab and/or blog_outbox_lab", s.Where(), db, Suggest(db, labsql.Databases()))
		}
	}
	return nil
}

// SplitList splits a comma-separated attribute value, dropping blanks.
func SplitList(v string) []string {
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (resetKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	r.Close()
	res := lab.Result{Passed: true}
	var obs []string
	if needsBinlog(r.Lesson) {
		svc, note, err := r.Svc().WithBinlog(ctx)
		if err != nil {
			return fail("%v", err)
		}
		r.useServices(svc)
		if note != "" {
			obs = append(obs, note)
		}
	}
	svc := r.Env.Svc
	for _, db := range SplitList(s.Attrs["db"]) {
		name := svc.Names.Name(db)
		if _, err := services.DropOwned(ctx, svc.MySQL, name); err != nil {
			return fail("%v", err)
		}
		text, _ := labsql.File(labsql.Schema(db))
		c, err := svc.MySQL.Conn(ctx)
		if err != nil {
			return fail("reset %s: %v", name, err)
		}
		marked := false
		for _, st := range labsql.Split(r.Expand(text)) {
			st = svc.Names.SQL(st)
			res.Sent = append(res.Sent, st)
			creates := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st)), "CREATE DATABASE")
			// Marked the moment it exists, even when the run is ending (a
			// session closed: the CREATE may have landed though the client
			// saw its context end): a database the lab made and did not
			// mark is one it can neither drop again nor give back.
			mark := func() error {
				mc, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				return services.MarkFor(mc, svc.MySQL, name, svc.Config.Owner)
			}
			if _, err := c.ExecContext(ctx, st); err != nil {
				if creates {
					mark() // only where it landed: no database, no mark
				}
				c.Close()
				return fail("reset %s: %s: %v", name, firstLine(st), err)
			}
			if creates && !marked {
				if err := mark(); err != nil {
					c.Close()
					return fail("%v", err)
				}
				marked = true
			}
		}
		c.Close()
		if !marked {
			if err := services.MarkFor(ctx, svc.MySQL, name, svc.Config.Owner); err != nil {
				return fail("%v", err)
			}
		}
		obs = append(obs, sayRecreated.F(name, labsql.Schema(db)))
	}
	if pat := s.Attrs["redis"]; pat != "" {
		if svc.Redis == nil {
			return fail("reset redis=%s: Redis is not connected", pat)
		}
		pat = r.RedisKey(pat)
		n, err := svc.DeleteRedisKeys(ctx, pat)
		if err != nil {
			return fail("reset redis: %v", err)
		}
		res.Sent = append(res.Sent, "SCAN 0 MATCH "+pat+" / DEL")
		obs = append(obs, sayDeletedKeys.F(n, pat))
	}
	hooksMu.Lock()
	hs := append([]resetHook(nil), hooks...)
	hooksMu.Unlock()
	for _, h := range hs {
		lines, err := h(ctx, r, s)
		if err != nil {
			return fail("reset: %v", err)
		}
		obs = append(obs, lines...)
	}
	res.Observed = strings.Join(obs, "\n")
	return res
}

// RedisKey namespaces a Redis key or pattern (services.Names.RedisKey).
func (r *Run) RedisKey(k string) string { return r.Env.Svc.Names.RedisKey(k) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
