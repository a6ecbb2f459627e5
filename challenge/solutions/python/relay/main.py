"""A reference solution of the relay challenge: claims with a lease
(lease_token, locked_until) taken with SKIP LOCKED, every publish with the
event id as its message id and confirmed by the broker before the event is
marked SENT, under its own lease token only.

Needs pika and PyMySQL (Debian: python3-pika python3-pymysql).
"""
import os
import signal
import sys
import uuid

import pika
import pymysql


def log(*args):
    print(os.environ.get("LAB_NAME", "relay") + ":", *args, file=sys.stderr, flush=True)


class NoConfirm(Exception):
    pass


def on_alarm(signum, frame):
    # pika's blocking publish waits for its confirm with no timeout; a
    # dropped confirm would hold it for ever.
    raise NoConfirm("no confirm in time")


def claim(db, token, lease):
    """Take up to 10 events NEW and due, or SENDING under an expired lease."""
    with db.cursor() as cur:
        cur.execute("SELECT event_id FROM outbox_event WHERE (status = 'NEW' AND available_at <= NOW(6)) "
                    "OR (status = 'SENDING' AND locked_until < NOW(6)) ORDER BY created_at LIMIT 10 "
                    "FOR UPDATE SKIP LOCKED")
        ids = [r[0] for r in cur.fetchall()]
        if ids:
            cur.execute("UPDATE outbox_event SET status = 'SENDING', lease_token = %s, "
                        "locked_until = NOW(6) + INTERVAL %s SECOND, attempts = attempts + 1 "
                        "WHERE event_id IN (" + ",".join(["%s"] * len(ids)) + ")", [token, lease] + ids)
    db.commit()
    if not ids:
        return []
    with db.cursor() as cur:
        cur.execute("SELECT event_id, payload FROM outbox_event WHERE lease_token = %s ORDER BY created_at", (token,))
        rows = cur.fetchall()
    db.commit()
    return rows


def main():
    db = pymysql.connect(
        host=os.environ["LAB_MYSQL_HOST"], port=int(os.environ["LAB_MYSQL_PORT"]),
        user=os.environ["LAB_MYSQL_USER"], password=os.environ["LAB_MYSQL_PASSWORD"],
        database=os.environ["LAB_MYSQL_DATABASE"], autocommit=False)
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    ch.confirm_delivery()
    exchange, key = os.environ["LAB_EXCHANGE"], os.environ["LAB_ROUTING_KEY"]
    lease = max(1, int(os.environ.get("LAB_LEASE_SECONDS", "2")))
    signal.signal(signal.SIGALRM, on_alarm)
    while True:
        token = uuid.uuid4().hex
        batch = claim(db, token, lease)
        if not batch:
            conn.sleep(0.2)
            continue
        for event_id, payload in batch:
            signal.alarm(lease)
            # Confirmed, or an exception: nacked, unroutable, no confirm in
            # time, the connection gone. Then the claim expires and the
            # event goes out again, under the same message id.
            ch.basic_publish(exchange, key, payload,
                             pika.BasicProperties(message_id=event_id, content_type="application/json", delivery_mode=2))
            signal.alarm(0)
            with db.cursor() as cur:
                cur.execute("UPDATE outbox_event SET status = 'SENT', lease_token = NULL, locked_until = NULL "
                            "WHERE event_id = %s AND lease_token = %s", (event_id, token))
            db.commit()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:
        log("exit:", repr(err))
        sys.exit(1)
