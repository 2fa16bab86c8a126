-- Payment links: the sellers' saved link defaults, product images, links and their orders.

-- The seller's saved defaults for new links (GET /payment-links/business-configurations).
-- payment_types is not stored: it is always derived from `payment` (see BusinessConfiguration).
CREATE TABLE business_configurations (
  seller_id                uuid PRIMARY KEY REFERENCES sellers (seller_id) ON DELETE CASCADE,
  expiration               timestamptz,
  max_orders               integer CHECK (max_orders >= 1),
  request_delivery_address boolean NOT NULL DEFAULT false,
  payment                  jsonb NOT NULL,
  currency                 text NOT NULL,
  updated_at               timestamptz NOT NULL DEFAULT now()
);

-- Uploaded product images, owned by the seller of the token that uploaded them. No foreign key to
-- sellers: a token outlives nothing here, and the upload operation has no 404 to answer with.
CREATE TABLE product_images (
  image_id     uuid PRIMARY KEY,
  seller_id    uuid NOT NULL,
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
  size_bytes   integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 5242880),
  content      bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX product_images_seller_id ON product_images (seller_id);

-- `status` holds ACTIVE, INACTIVE or EXPIRED as last set; what a response says is
-- payment_link_status_at(...) below, evaluated at the time of the call.
CREATE TABLE payment_links (
  link_id                  uuid PRIMARY KEY,
  short_id                 text NOT NULL UNIQUE,
  seller_id                uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  label                    text NOT NULL,
  expiration               timestamptz,
  max_orders               integer CHECK (max_orders >= 1),
  type                     text NOT NULL CHECK (type IN ('custom', 'unique')),
  successful_sales         integer NOT NULL DEFAULT 0 CHECK (successful_sales >= 0),
  request_delivery_address boolean NOT NULL,
  shipping_amount          bigint NOT NULL DEFAULT 0 CHECK (shipping_amount >= 0),
  products                 jsonb NOT NULL,
  payment                  jsonb NOT NULL,
  status                   text NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE', 'EXPIRED')),
  currency                 text NOT NULL,
  -- Case-folded by the server (locale-independent), for the `title` filter and the `label` sort.
  label_folded             text NOT NULL,
  product_titles_folded    text[] NOT NULL,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_links_seller_created ON payment_links (seller_id, created_at);

-- The one rule that decides a link's status at an instant (PaymentLink.status): EXPIRED once set,
-- once `expiration` is reached, or once successful_sales reaches max_orders; otherwise as stored.
-- Every read of a link and the list's status filter and sort go through it.
CREATE FUNCTION payment_link_status_at(stored text, expiration timestamptz, successful_sales integer, max_orders integer, at timestamptz)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN stored = 'EXPIRED' THEN 'EXPIRED'
    WHEN expiration IS NOT NULL AND expiration <= at THEN 'EXPIRED'
    WHEN max_orders IS NOT NULL AND successful_sales >= max_orders THEN 'EXPIRED'
    ELSE stored
  END
$$;

-- Orders placed through a link. The amount is priced when the order is created; history is the
-- list of {status, description, created_at}, oldest first.
CREATE TABLE payment_link_orders (
  order_id       uuid PRIMARY KEY,
  link_id        uuid NOT NULL REFERENCES payment_links (link_id) ON DELETE CASCADE,
  currency       text NOT NULL,
  amount         bigint NOT NULL CHECK (amount >= 0),
  reference_code text NOT NULL,
  checkout_id    text NOT NULL,
  customer       jsonb NOT NULL,
  shipping       jsonb,
  status         text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'authentication_denied', 'paid', 'refunded')),
  history        jsonb NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX payment_link_orders_link_id ON payment_link_orders (link_id);
