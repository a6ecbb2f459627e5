"""A reference solution of the consumer challenges (once, business-key,
conflict): the mark and the effect in one transaction, keyed by the business
key, acked after the commit; a repeat that disagrees with the stored
operation is recorded in consumed_conflict and applies nothing.

Needs pika and PyMySQL (Debian: python3-pika python3-pymysql).
"""
import json
import os
import sys

import pika
import pymysql

NAME = os.environ.get("LAB_CONSUMER_NAME", "points-award")


def log(*args):
    print(os.environ.get("LAB_NAME", "consumer") + ":", *args, file=sys.stderr, flush=True)


def apply(db, event_id, e):
    """Mark and apply in one transaction; a repeat is compared, a conflict recorded."""
    with db.cursor() as cur:
        try:
            cur.execute("INSERT INTO consumed_operation (consumer_name, business_key, event_id, user_id, amount) "
                        "VALUES (%s, %s, %s, %s, %s)", (NAME, e["business_key"], event_id, e["user_id"], e["amount"]))
        except pymysql.err.IntegrityError as err:
            if err.args[0] != 1062:
                raise
            cur.execute("SELECT event_id, user_id, amount FROM consumed_operation "
                        "WHERE consumer_name = %s AND business_key = %s", (NAME, e["business_key"]))
            stored_id, stored_user, stored_amount = cur.fetchone()
            if (stored_user, stored_amount) != (e["user_id"], e["amount"]):
                cur.execute("INSERT INTO consumed_conflict (consumer_name, business_key, event_id, user_id, amount, "
                            "stored_event_id, stored_user_id, stored_amount) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                            "ON DUPLICATE KEY UPDATE seen = seen + 1",
                            (NAME, e["business_key"], event_id, e["user_id"], e["amount"],
                             stored_id, stored_user, stored_amount))
                log("conflict on", e["business_key"], event_id, "vs", stored_id)
            db.commit()
            return
        cur.execute("UPDATE points_account SET points = points + %s WHERE user_id = %s", (e["amount"], e["user_id"]))
    db.commit()


def main():
    db = pymysql.connect(
        host=os.environ["LAB_MYSQL_HOST"], port=int(os.environ["LAB_MYSQL_PORT"]),
        user=os.environ["LAB_MYSQL_USER"], password=os.environ["LAB_MYSQL_PASSWORD"],
        database=os.environ["LAB_MYSQL_DATABASE"], autocommit=False)
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=10)

    def on_message(ch, method, props, body):
        apply(db, props.message_id, json.loads(body))
        ch.basic_ack(delivery_tag=method.delivery_tag)  # after the commit

    ch.basic_consume(queue=os.environ["LAB_QUEUE"], on_message_callback=on_message)
    ch.start_consuming()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # a cut connection, a killed session: not acked, so it comes again
        log("exit:", repr(err))
        sys.exit(1)
