"""The order challenge's starter: it meets the contract (CONTRACT.md) and
runs, and it is wrong in the way the challenge is about. Change the place
marked CHANGE until `lab challenge run order` passes.

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
        database=os.environ["LAB_MYSQL_DATABASE"], autocommit=True)
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=10)

    def on_message(ch, method, props, body):
        e = json.loads(body)  # {"orderId": 42, "version": 1, "status": "CREATED"}
        with db.cursor() as cur:
            # CHANGE: this writes whatever state comes, so an older event
            # that comes late overwrites a newer one.
            cur.execute("UPDATE order_view SET status = %s, version = %s WHERE order_id = %s",
                        (e["status"], e["version"], e["orderId"]))
        ch.basic_ack(delivery_tag=method.delivery_tag)

    ch.basic_consume(queue=os.environ["LAB_QUEUE"], on_message_callback=on_message)
    ch.start_consuming()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # a cut connection, a killed session: exit and be restarted
        log("exit:", repr(err))
        sys.exit(1)
