-- A product image keeps the SHA-256 of its bytes instead of the bytes. No operation of the contract
-- reads an image back, and storing 5 MiB in PGlite cost the sandbox's process hundreds of MB of
-- WebAssembly memory, which PGlite never gives back (an upload took a test process from ~380 MB to
-- over 1 GB). Its type, size, owner and time are kept as before.
ALTER TABLE product_images ADD COLUMN content_sha256 text;
UPDATE product_images SET content_sha256 = encode(sha256(content), 'hex');
ALTER TABLE product_images ALTER COLUMN content_sha256 SET NOT NULL;
ALTER TABLE product_images ADD CONSTRAINT product_images_content_sha256_hex CHECK (content_sha256 ~ '^[0-9a-f]{64}$');
ALTER TABLE product_images DROP COLUMN content;
