"""The consumer challenges' starter: it meets the contract (CONTRACT.md) and
runs, and it is wrong in the way the challenges are about. Change the places
marked CHANGE until `lab challenge run` passes.

Needs pika and PyMySQL (Debian: python3-pika python3-pymysql).
"""
import json
import os
import sys

import pika
import pymysql


def log(*args):
    print(os.environ.get("LAB_NAME", "consumer") + ":", *args, file=sys.stderr, flush=True)


def main():
    db = pymysql.connect(
        host=os.environ["LAB_MYSQL_HOST"], port=int(os.environ["LAB_MYSQL_PORT"]),
        user=os.environ["LAB_MYSQL_USER"], password=os.environ["LAB_MYSQL_PASSWORD"],
        database=os.environ["LAB_MYSQL_DATABASE"], autocommit=False)
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=10)

    def on_message(ch, method, props, body):
        e = json.loads(body)
        # CHANGE: this applies every delivery it gets. A message the broker
        # delivers again (your ack never reached it) is applied again.
        with db.cursor() as cur:
            cur.execute("UPDATE points_account SET points = points + %s WHERE user_id = %s",
                        (e["amount"], e["user_id"]))
        db.commit()
        ch.basic_ack(delivery_tag=method.delivery_tag)

    ch.basic_consume(queue=os.environ["LAB_QUEUE"], on_message_callback=on_message)
    ch.start_consuming()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # a cut connection, a killed session: exit and be restarted
        log("exit:", repr(err))
        sys.exit(1)
