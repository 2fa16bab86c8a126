-- Sandbox test clocks (reference-only): a frozen instant per clock, the seller's customers attached
-- to it, and the subscriptions that live on its time (subscriptions.test_clock_id, set at creation).

CREATE TABLE test_clocks (
  test_clock_id uuid PRIMARY KEY,
  seller_id     uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  name          text,
  frozen_time   timestamptz NOT NULL,
  created_at    timestamptz NOT NULL
);

-- A customer lives on at most one clock of its seller: the primary key says so.
CREATE TABLE test_clock_customers (
  seller_id     uuid NOT NULL,
  customer_id   text NOT NULL,
  test_clock_id uuid NOT NULL REFERENCES test_clocks (test_clock_id) ON DELETE CASCADE,
  position      integer NOT NULL,
  PRIMARY KEY (seller_id, customer_id)
);
CREATE INDEX test_clock_customers_clock ON test_clock_customers (test_clock_id);

-- NULL: the subscription bills on real time (the billing worker); otherwise only when its clock advances.
ALTER TABLE subscriptions ADD COLUMN test_clock_id uuid REFERENCES test_clocks (test_clock_id);
CREATE INDEX subscriptions_test_clock ON subscriptions (test_clock_id) WHERE test_clock_id IS NOT NULL;

-- The billing engine looks for in-flight payments to expire (pending after 24 h, authorized after 7 days).
CREATE INDEX subscription_payments_in_flight ON subscription_payments (created_at) WHERE status IN ('pending', 'authorized');
