"""The relay challenge's starter: it meets the contract (CONTRACT.md) and
runs, and it is wrong in the ways the challenge is about. Change the places
marked CHANGE until `lab challenge run relay` passes.

Needs pika and PyMySQL (Debian: python3-pika python3-pymysql).
"""
import os
import sys
import time

import pika
import pymysql


def log(*args):
    print(os.environ.get("LAB_NAME", "relay") + ":", *args, file=sys.stderr, flush=True)


def main():
    db = pymysql.connect(
        host=os.environ["LAB_MYSQL_HOST"], port=int(os.environ["LAB_MYSQL_PORT"]),
        user=os.environ["LAB_MYSQL_USER"], password=os.environ["LAB_MYSQL_PASSWORD"],
        database=os.environ["LAB_MYSQL_DATABASE"], autocommit=True)
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    exchange, key = os.environ["LAB_EXCHANGE"], os.environ["LAB_ROUTING_KEY"]
    while True:
        with db.cursor() as cur:
            cur.execute("SELECT event_id, payload FROM outbox_event WHERE status = 'NEW' ORDER BY created_at LIMIT 10")
            batch = cur.fetchall()
        if not batch:
            conn.sleep(0.2)
            continue
        for event_id, payload in batch:
            with db.cursor() as cur:
                # CHANGE: a claim with no expiry. A relay killed right after
                # this leaves the event SENDING for ever.
                cur.execute("UPDATE outbox_event SET status = 'SENDING' WHERE event_id = %s", (event_id,))
            # CHANGE: no publisher confirm. basic_publish returns once the
            # bytes are written; the broker may never get them.
            ch.basic_publish(exchange, key, payload,
                             pika.BasicProperties(message_id=event_id, content_type="application/json", delivery_mode=2))
            with db.cursor() as cur:
                cur.execute("UPDATE outbox_event SET status = 'SENT' WHERE event_id = %s", (event_id,))


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # a cut connection, a killed session: exit and be restarted
        log("exit:", repr(err))
        sys.exit(1)
