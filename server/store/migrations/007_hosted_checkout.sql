-- The hosted checkout: what a payment of a payment intent or of a payment link order leaves behind.
-- Card data is kept as bin and last four only; the number and the security code are never stored.

-- The result of the intent's latest payment. `status` moves created → paid (standard), authorized
-- (pre-authorization, captured later by payment_id) or verified (card verification); a Denied
-- attempt leaves it payable (`denied`), so the customer may try again.
ALTER TABLE payment_intents ADD COLUMN checkout_id uuid;
ALTER TABLE payment_intents ADD COLUMN payment_id uuid;
ALTER TABLE payment_intents ADD COLUMN card_bin text;
ALTER TABLE payment_intents ADD COLUMN card_last_four text;
ALTER TABLE payment_intents ADD COLUMN card_id uuid;
ALTER TABLE payment_intents ADD COLUMN paid_at timestamptz;

-- Every payment attempt made on a hosted page (an intent's or a link order's), Authorized or Denied.
CREATE TABLE checkout_payments (
  payment_id         uuid PRIMARY KEY,
  seller_id          uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  checkout_id        uuid NOT NULL,
  payment_intent_id  uuid REFERENCES payment_intents (payment_intent_id) ON DELETE CASCADE,
  order_id           uuid REFERENCES payment_link_orders (order_id) ON DELETE CASCADE,
  method             text NOT NULL,          -- credit | debit | google_pay | apple_pay | c2p_master
  installments       integer,                -- credit in 2 or more installments only
  amount             bigint NOT NULL,
  currency           text NOT NULL,
  card_brand         text,
  card_bin           text CHECK (card_bin ~ '^[0-9]{6}$'),
  card_last_four     text CHECK (card_last_four ~ '^[0-9]{4}$'),
  status             text NOT NULL CHECK (status IN ('Authorized', 'Denied')),
  return_code        text NOT NULL,
  return_message     text NOT NULL,
  authorization_code text,
  created_at         timestamptz NOT NULL,
  CHECK ((payment_intent_id IS NULL) <> (order_id IS NULL))
);
CREATE INDEX checkout_payments_intent ON checkout_payments (payment_intent_id);

-- Cards stored by a card verification, for later charges by card_id: never the number.
CREATE TABLE vault_cards (
  card_id           uuid PRIMARY KEY,
  seller_id         uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  customer_id       text NOT NULL,
  brand             text,
  bin               text NOT NULL CHECK (bin ~ '^[0-9]{6}$'),
  last_four         text NOT NULL CHECK (last_four ~ '^[0-9]{4}$'),
  expiration_month  text NOT NULL,
  expiration_year   text NOT NULL,
  cardholder_name   text NOT NULL,
  created_at        timestamptz NOT NULL
);
CREATE INDEX vault_cards_seller ON vault_cards (seller_id, customer_id);
