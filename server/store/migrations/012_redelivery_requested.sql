-- A sandbox redelivery asked while an attempt of the delivery is in flight: that attempt is recorded
-- when it ends, then the delivery is due again (never two attempts of one delivery at once, and the
-- request is not lost to the attempt's result).
ALTER TABLE notification_deliveries ADD COLUMN redelivery_requested boolean NOT NULL DEFAULT false;
