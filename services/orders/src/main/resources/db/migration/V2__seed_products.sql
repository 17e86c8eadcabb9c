-- 100 products with varied prices. Stock is large enough that no load test
-- of the lab runs out (a full run creates well under a million orders).
INSERT INTO products (id, name, price_cents, stock)
SELECT i, 'Product ' || i, 99 + (i * 37) % 5000, 1000000000
FROM generate_series(1, 100) AS i;
