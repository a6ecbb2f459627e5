package services_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// A participant's Redis user reaches the keys the lab names for its
// namespace (Names.RedisKey) and no others: lab_NS:* and NS:*, or lab:*
// for the default namespace (lab replay --as-participant without
// --namespace, whose consumer was refused its own lab:dedup:… key).
func TestAParticipantsRedisUserReachesItsNamespacesKeysOnly(t *testing.T) {
	env := labtest.Connect(t, labtest.Redis)
	ctx := context.Background()
	for _, c := range []struct {
		ns          string
		own, others []string
	}{
		{env.NS, []string{"lab_" + env.NS + ":k", env.NS + ":k"}, []string{"lab:k", "lab_x" + env.NS + ":k", "other:k"}},
		{"", []string{"lab:k"}, []string{"lab_" + env.NS + ":k", "other:k"}},
	} {
		addr, err := services.MakeRedisUser(ctx, env.Svc.Redis, env.Config().Redis, c.ns)
		if err != nil {
			t.Fatal(err)
		}
		defer services.DropRedisUser(context.Background(), env.Svc.Redis, c.ns)
		rc := redis.NewClient(services.RedisOptions(addr))
		defer rc.Close()
		for _, k := range c.own {
			if err := rc.Set(ctx, k, "1", 0).Err(); err != nil {
				t.Errorf("namespace %q: its user was refused its key %s: %v", c.ns, k, err)
			}
			env.Svc.Redis.Del(ctx, k)
		}
		for _, k := range c.others {
			if err := rc.Set(ctx, k, "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Errorf("namespace %q: its user may set %s (%v)", c.ns, k, err)
				env.Svc.Redis.Del(ctx, k)
			}
		}
	}
}
