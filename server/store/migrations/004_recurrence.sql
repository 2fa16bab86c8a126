-- Recurrence: plans, subscriptions, their installments and charge attempts, payment events and the
-- audit trail of the subscription and plan APIs.

-- The seller's Recurrence product (gates createSubscription and updateFloatingInstallment). The
-- contract's seller `services` object has no such key, so it is a column of its own.
ALTER TABLE sellers ADD COLUMN recurrence_enabled boolean NOT NULL DEFAULT true;

CREATE TABLE plans (
  plan_id                uuid PRIMARY KEY,
  seller_id              uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  name                   text NOT NULL,
  description            text,
  amount                 integer NOT NULL CHECK (amount >= 0),
  currency               text NOT NULL,
  payment_types          text NOT NULL CHECK (payment_types IN ('credit_card', 'debit_card')),
  sales_tax              integer,
  product_type           text,
  period_type            text NOT NULL,
  billing_cycle          integer NOT NULL CHECK (billing_cycle >= 1),
  specific_cycle_in_days integer CHECK (specific_cycle_in_days >= 1),
  -- [{installment, amount}] sorted by installment, at most one entry per installment.
  floating_data          jsonb NOT NULL DEFAULT '[]',
  status                 text NOT NULL CHECK (status IN ('active', 'inactive')),
  create_date            timestamptz NOT NULL
);
CREATE INDEX plans_seller_id ON plans (seller_id);

CREATE TABLE subscriptions (
  subscription_id        uuid PRIMARY KEY,
  seller_id              uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  plan_id                uuid NOT NULL REFERENCES plans (plan_id),
  order_id               text NOT NULL,
  customer_id            text NOT NULL,
  installment_start_date date,
  create_date            timestamptz NOT NULL,
  payment_date           integer NOT NULL CHECK (payment_date BETWEEN 1 AND 31),
  status                 text NOT NULL,
  status_details         text NOT NULL,
  -- 'credit' or 'debit': the key of payment_type and of the payments' transaction.
  payment_method         text NOT NULL CHECK (payment_method IN ('credit', 'debit')),
  -- The answered payment type (card with bin, brand and card_id; tokenization without cryptogram).
  payment_type           jsonb NOT NULL,
  -- The card's vault token (what later charges use); never the card number or security code.
  card_number_token      text NOT NULL,
  shippings              jsonb,
  device                 jsonb,
  -- Σ shippings[].shipping_amount, added to every installment's charge.
  shipping_amount        integer NOT NULL DEFAULT 0,
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_seller_id ON subscriptions (seller_id);

-- One row per installment, written at creation from the plan's schedule. The billing engine claims
-- due rows with `FOR UPDATE SKIP LOCKED` on (status, next_attempt_on).
--   status: scheduled (no attempt yet) | processing (an attempt in flight) | retrying (an attempt
--   failed, next_attempt_on is the retry date) | paid | failed (no retry left) | void (billing
--   stopped before it was charged).
CREATE TABLE subscription_installments (
  subscription_id         uuid NOT NULL REFERENCES subscriptions (subscription_id) ON DELETE CASCADE,
  installment             integer NOT NULL CHECK (installment >= 1),
  seller_id               uuid NOT NULL,
  original_scheduled_date date NOT NULL,
  original_amount         integer NOT NULL CHECK (original_amount >= 0),
  scheduled_date          date NOT NULL,
  amount                  integer NOT NULL CHECK (amount >= 0),
  -- Changed by updateFloatingInstallment (listed in the subscription's floating_data).
  floating                boolean NOT NULL DEFAULT false,
  status                  text NOT NULL,
  attempts                integer NOT NULL DEFAULT 0,
  next_attempt_on         date,
  paid_at                 timestamptz,
  PRIMARY KEY (subscription_id, installment)
);
CREATE INDEX subscription_installments_due ON subscription_installments (next_attempt_on)
  WHERE status IN ('scheduled', 'retrying');

-- One row per charge attempt of an installment.
CREATE TABLE subscription_payments (
  payment_id                 uuid PRIMARY KEY,
  subscription_id            uuid NOT NULL REFERENCES subscriptions (subscription_id) ON DELETE CASCADE,
  seller_id                  uuid NOT NULL,
  installment                integer NOT NULL,
  attempt                    integer NOT NULL CHECK (attempt >= 1),
  order_id                   text NOT NULL,
  amount                     integer NOT NULL CHECK (amount >= 0),
  currency                   text NOT NULL,
  status                     text NOT NULL,
  delayed                    boolean NOT NULL DEFAULT false,
  -- The acquirer's answer (ids, reason, authorization); never a card number.
  acquirer_result            jsonb NOT NULL,
  payment_received_timestamp timestamptz,
  created_at                 timestamptz NOT NULL,
  UNIQUE (subscription_id, installment, attempt)
);

-- Applied payment events, one per (seller, idempotency key): the unique key is what serialises two
-- concurrent calls with one key. `response` is the 200 answered, as text so that a replay is
-- byte for byte the same (jsonb would reorder its keys); null while the first call is running.
CREATE TABLE subscription_events (
  seller_id       uuid NOT NULL,
  idempotency_key uuid NOT NULL,
  event_name      text NOT NULL,
  event_id        uuid NOT NULL,
  payment_id      uuid NOT NULL,
  status          text NOT NULL,
  response        text,
  applied_at      timestamptz NOT NULL,
  PRIMARY KEY (seller_id, idempotency_key)
);

-- Who changed what (the `username` header, or the token's client id when absent).
CREATE TABLE recurrence_audit (
  audit_id   bigserial PRIMARY KEY,
  seller_id  uuid NOT NULL,
  actor      text NOT NULL,
  client_id  text NOT NULL,
  action     text NOT NULL,
  object_id  text NOT NULL,
  at         timestamptz NOT NULL DEFAULT now()
);
