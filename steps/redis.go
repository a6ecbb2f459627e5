package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	lab "github.com/rmlab/lab"
)

// redisKind sends Redis commands, one per line, as typed in redis-cli.
// Arguments starting with "lab:" are keys and get the namespace. Every
// reply is kept, a row per command; a command the server refuses fails the
// step unless error= names the error's first word (WRONGTYPE, ERR, …), and
// the commands after it are not sent.
//
//	```redis [error=WRONGTYPE]
//	SET lab:dedup:order:42:paid 1 NX EX 5
//	```
type redisKind struct{}

func (redisKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "error"); err != nil {
		return err
	}
	if v, ok := s.Attrs["error"]; ok && (v == "" || strings.ToUpper(v) != v) {
		return fmt.Errorf("%s: redis error=%q: write the error's first word as Redis sends it (WRONGTYPE, ERR, NOSCRIPT, …)", s.Where(), v)
	}
	if strings.TrimSpace(s.Body) == "" {
		return fmt.Errorf("%s: redis step has no command", s.Where())
	}
	return nil
}

func (redisKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	if r.Env.Svc.Redis == nil {
		return fail("Redis is not connected (run `lab doctor`)")
	}
	res := lab.Result{Passed: true}
	var obs []string
	o := &Outcome{Source: "redis", Columns: []string{"reply"}}
	for _, line := range strings.Split(strings.TrimSpace(s.Body), "\n") {
		args := r.redisArgs(line)
		if len(args) == 0 {
			continue
		}
		shown := strings.Trim(fmt.Sprint(args), "[]")
		res.Sent = append(res.Sent, shown)
		o.Stmt = shown
		v, err := r.Env.Svc.Redis.Do(ctx, args...).Result()
		switch {
		case err == redis.Nil:
			o.Rows = append(o.Rows, []string{"(nil)"})
			obs = append(obs, "> "+shown+"\n(nil)")
		case err != nil:
			code, _, _ := strings.Cut(err.Error(), " ")
			o.ErrCode, o.ErrText = code, err.Error()
			o.Rows = append(o.Rows, []string{"(error) " + err.Error()})
			obs = append(obs, "> "+shown+"\n(error) "+err.Error())
		default:
			txt := fmt.Sprint(v)
			o.Rows = append(o.Rows, []string{txt})
			obs = append(obs, "> "+shown+"\n"+txt)
		}
		if err != nil && err != redis.Nil {
			if want := s.Attrs["error"]; want != o.ErrCode {
				res.Passed = false
				res.Why = "Redis refused " + shown + ": " + err.Error()
				if want != "" {
					res.Why += " (wanted error " + want + ")"
				}
			}
			break
		}
	}
	if want := s.Attrs["error"]; want != "" && o.ErrCode == "" {
		res.Passed = false
		res.Why = "wanted Redis error " + want + ", but every command succeeded"
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

func (r *Run) redisArgs(line string) []any {
	var args []any
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "lab:") {
			f = r.RedisKey(f)
		}
		args = append(args, f)
	}
	return args
}

// redisSource reads a ledger figure: "redis: GET lab:x" (a number, nil → 0)
// or "redis: EXISTS lab:x".
func redisSource(ctx context.Context, r *Run, _ *lab.Step, expr string) (int, error) {
	if r.Env.Svc.Redis == nil {
		return 0, fmt.Errorf("Redis is not connected")
	}
	v, err := r.Env.Svc.Redis.Do(ctx, r.redisArgs(expr)...).Result()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case string:
		return strconv.Atoi(x)
	}
	return 0, fmt.Errorf("%s returned %v, not a number", expr, v)
}
