-- The merchant notification outbox: a notification is written in the same transaction as the
-- payment result it reports, then delivered by a worker that records every attempt. Pending rows
-- survive a crash and are picked up again; a lease (locked_until) keeps two workers apart.

CREATE TABLE notification_deliveries (
  delivery_id      uuid PRIMARY KEY,
  seller_id        uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  event            text NOT NULL,            -- webhook name in the contract: checkout-notification
  mode             text NOT NULL,            -- instant | payment_link | recurring
  payload          jsonb NOT NULL,           -- exactly what is POSTed, validated before it is stored
  status           text NOT NULL DEFAULT 'pending', -- pending | delivered | abandoned
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL,
  delivered_at     timestamptz
);

CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notification_deliveries_seller ON notification_deliveries (seller_id, created_at);

CREATE TABLE notification_attempts (
  delivery_id  uuid NOT NULL REFERENCES notification_deliveries (delivery_id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  started_at   timestamptz NOT NULL,
  url          text,
  status_code  integer,                      -- absent when no answer came (timeout, refused)
  latency_ms   integer NOT NULL,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);
