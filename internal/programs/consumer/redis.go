package consumer

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The strategies that keep the mark in Redis, beside or instead of the
// database.

func (h *handling) redisKey() string { return h.c.RedisKey(h.c.Name, h.m.BusinessKey) }

func (h *handling) redisCheck(ctx context.Context) (string, bool, error) {
	v, err := h.c.Redis.Get(ctx, h.redisKey()).Result()
	if err == redis.Nil {
		h.c.logf("GET %s → (nil): no mark", h.redisKey())
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("Redis GET %s: %w", h.redisKey(), err)
	}
	h.c.logf("GET %s → %s", h.redisKey(), v)
	return v, true, nil
}

func (h *handling) redisSet(ctx context.Context, nx bool) (bool, error) {
	k := h.redisKey()
	secs := int64(h.c.TTL / time.Second)
	var ok bool
	var err error
	if nx {
		ok, err = h.c.Redis.SetNX(ctx, k, h.m.EventID, h.c.TTL).Result()
		if err == nil {
			reply := "OK"
			if !ok {
				reply = "(nil): the key exists"
			}
			h.c.logf("SET %s %s NX EX %d → %s", k, h.m.EventID, secs, reply)
		}
	} else {
		err = h.c.Redis.Set(ctx, k, h.m.EventID, h.c.TTL).Err()
		ok = err == nil
		if ok {
			h.c.logf("SET %s %s EX %d → OK", k, h.m.EventID, secs)
		}
	}
	if err != nil {
		return false, fmt.Errorf("Redis SET %s: %w", k, err)
	}
	return ok, nil
}

// redisFirst: SET NX, then the effect. Redis and the database share no
// transaction, so a failed transaction leaves the mark behind.
func (h *handling) redisFirst(ctx context.Context) (Result, error) {
	ok, err := h.redisSet(ctx, true)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: the Redis mark %s exists, so the message is turned away; nothing written", h.redisKey())}, nil
	}
	if err := h.c.reach(ctx, "after-redis"); err != nil {
		return Result{}, err
	}
	if err := h.effectTx(ctx); err != nil {
		return Result{}, fmt.Errorf("%w (the Redis mark %s stays set)", err, h.redisKey())
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// dbThenRedis: check the mark, the effect, then SET the mark.
func (h *handling) dbThenRedis(ctx context.Context) (Result, error) {
	if _, found, err := h.redisCheck(ctx); err != nil {
		return Result{}, err
	} else if found {
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: the Redis mark %s exists; nothing written", h.redisKey())}, nil
	}
	if err := h.effectTx(ctx); err != nil {
		return Result{}, err
	}
	if _, err := h.redisSet(ctx, false); err != nil {
		return Result{}, fmt.Errorf("%w (the effect is committed; a redelivery will apply it again)", err)
	}
	if err := h.c.reach(ctx, "after-redis"); err != nil {
		return Result{}, err
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// redisFilter: Redis answers "certainly done" fast; everything else goes to
// the one-tx rule in the database, which stays the authority.
func (h *handling) redisFilter(ctx context.Context) (Result, error) {
	if _, found, err := h.redisCheck(ctx); err != nil {
		return Result{}, err
	} else if found {
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: Redis filter hit %s, the database was not asked", h.redisKey())}, nil
	}
	res, err := h.oneTx(ctx)
	if err != nil || res.Outcome == Conflict {
		return res, err
	}
	// Set only once the database has the mark: a Redis hit then always
	// means committed work.
	if _, err := h.redisSet(ctx, false); err != nil {
		h.c.logf("warning: %v (harmless: the database rule still holds)", err)
	} else if err := h.c.reach(ctx, "after-redis"); err != nil {
		return Result{}, err
	}
	return res, nil
}
