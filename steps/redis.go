package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	lab "github.com/rmlab/lab"
)

func init() { Register("redis", redisKind{}) }

// redisKind sends Redis commands, one per line, as typed in redis-cli.
// Arguments starting with "lab:" are keys and get the namespace.
//
//	```redis
//	SET lab:dedup:order:42:paid 1 NX EX 5
//	```
type redisKind struct{}

func (redisKind) Check(s *lab.Step) error {
	if err := CheckAttrs(s); err != nil {
		return err
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
	for _, line := range strings.Split(strings.TrimSpace(s.Body), "\n") {
		args := r.redisArgs(line)
		if len(args) == 0 {
			continue
		}
		shown := strings.Trim(fmt.Sprint(args), "[]")
		res.Sent = append(res.Sent, shown)
		v, err := r.Env.Svc.Redis.Do(ctx, args...).Result()
		o := &Outcome{Source: "redis", Stmt: shown}
		switch {
		case err == redis.Nil:
			o.Columns, o.Rows = []string{"reply"}, [][]string{{"(nil)"}}
			obs = append(obs, "> "+shown+"\n(nil)")
		case err != nil:
			o.ErrCode, o.ErrText = "redis", err.Error()
			obs = append(obs, "> "+shown+"\n(error) "+err.Error())
		default:
			txt := fmt.Sprint(v)
			o.Columns, o.Rows = []string{"reply"}, [][]string{{txt}}
			obs = append(obs, "> "+shown+"\n"+txt)
		}
		r.SetOutcome(o)
	}
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
