-- The orders service's tables. Stock may never go negative: an order that
-- would overdraw a product fails as a whole, whichever persistence mode ran.
CREATE TABLE products (
    id          bigint PRIMARY KEY,
    name        text   NOT NULL,
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    stock       bigint NOT NULL CHECK (stock >= 0)
);

CREATE TABLE orders (
    id            bigserial   PRIMARY KEY,
    customer_id   bigint      NOT NULL,
    customer_name text        NOT NULL,
    total_cents   bigint      NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE order_lines (
    order_id         bigint NOT NULL REFERENCES orders (id),
    line_no          int    NOT NULL,
    product_id       bigint NOT NULL REFERENCES products (id),
    product_name     text   NOT NULL,
    quantity         int    NOT NULL CHECK (quantity > 0),
    unit_price_cents bigint NOT NULL,
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE order_audit (
    id       bigserial   PRIMARY KEY,
    order_id bigint      NOT NULL REFERENCES orders (id),
    event    text        NOT NULL,
    detail   text        NOT NULL,
    at       timestamptz NOT NULL DEFAULT now()
);
