-- Web checkout: payment intents (what the hosted checkout page shows and charges) and each seller's
-- technical configuration (layout, redirect addresses, notification webhook).

CREATE TABLE payment_intents (
  payment_intent_id  uuid PRIMARY KEY,
  seller_id          uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  -- standard | preauthorization | card_verification (from `configurations`)
  flow               text NOT NULL,
  order_id           text,
  -- Minor units; both NULL for a card verification, which charges nothing.
  amount             bigint,
  currency           text,
  products           jsonb,
  customer           jsonb NOT NULL,
  shipping           jsonb,
  -- pickup_store, shipping_method, soft_descriptor, dynamic_mcc, additional_data, sub_merchant as sent.
  order_details      jsonb NOT NULL,
  configurations     jsonb NOT NULL,
  -- BR seller and a customer_id that is neither a valid CPF nor CNPJ: the checkout will deny the
  -- payment with FRAUD_PREVENTION (the intent itself is accepted).
  fraud_prevention_denial boolean NOT NULL,
  status             text NOT NULL,
  created_at         timestamptz NOT NULL,
  -- Payable until Authorized or this instant (created_at + 24 h).
  expires_at         timestamptz NOT NULL
);
CREATE INDEX payment_intents_seller_id ON payment_intents (seller_id, created_at);

-- One row per seller once it has updated its configuration; until then the defaults apply.
-- notification_password is kept recoverable (not hashed) because webhook deliveries send it as HTTP
-- Basic; it is never returned by the API nor logged.
CREATE TABLE web_checkout_configurations (
  seller_id              uuid PRIMARY KEY REFERENCES sellers (seller_id) ON DELETE CASCADE,
  primary_color          text NOT NULL,
  accent_color           text NOT NULL,
  type_face              text NOT NULL,
  success_url            text,
  error_url              text,
  notification_url       text,
  notification_authentication_type text,
  notification_user      text,
  notification_password  text,
  updated_at             timestamptz NOT NULL DEFAULT now()
);
