-- The shop's schema and data, loaded with psql before the services start (so
-- no seeding shows in the traces). 100 customers, 300 orders; the customer of
-- order id is (id*7 % 100) + 1, so any 30 consecutive orders have 30
-- different customers.
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS customers;
CREATE TABLE customers (
  id integer PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL
);
CREATE TABLE orders (
  id integer PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customers(id),
  total_cents integer NOT NULL,
  created_at timestamptz NOT NULL
);
INSERT INTO customers (id, name, email)
  SELECT i, 'Customer ' || i, 'customer' || i || '@example.test' FROM generate_series(1, 100) AS i;
INSERT INTO orders (id, customer_id, total_cents, created_at)
  SELECT i, (i * 7 % 100) + 1, 500 + (i * 131 % 20000), timestamptz '2026-01-01 00:00:00+00' + i * interval '1 hour'
  FROM generate_series(1, 300) AS i;
