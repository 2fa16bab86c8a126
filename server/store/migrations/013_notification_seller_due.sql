-- The delivery worker leases a few due deliveries of each seller (oldest due sellers first) instead
-- of the oldest due rows of all sellers, where one seller's backlog filled the window: each seller's
-- due deliveries are read through this index.
CREATE INDEX notification_deliveries_seller_due ON notification_deliveries (seller_id, next_attempt_at) WHERE status = 'pending';
