// shop: the service users call. Express, Knex + Objection on PostgreSQL, and
// HTTP calls to pricing.
//   GET /orders/nplus1   30 orders, then each order's customer, one query each
//   GET /orders/joined   the same 30 orders with their customers, two queries
//                        (Objection withGraphFetched: orders, then customers whereIn)
//   GET /cart/nplus1     20 items, one GET pricing /price/:id after another
//   GET /cart/batched    the same 20 items, one GET pricing /prices?ids=...
'use strict';
const http = require('node:http');
const express = require('express');
const Knex = require('knex');
const { Model } = require('objection');

const knex = Knex({
  client: 'pg',
  connection: process.env.DATABASE_URL,
  pool: { min: 1, max: 8 },
});
Model.knex(knex);

class Customer extends Model {
  static get tableName() { return 'customers'; }
}
class Order extends Model {
  static get tableName() { return 'orders'; }
  static get relationMappings() {
    return {
      customer: {
        relation: Model.BelongsToOneRelation,
        modelClass: Customer,
        join: { from: 'orders.customer_id', to: 'customers.id' },
      },
    };
  }
}

const ORDERS_PER_PAGE = 30;
const ORDER_PAGES = 10; // db.sql seeds 300 orders
const CART_ITEMS = 20;
const PRICING_URL = process.env.PRICING_URL || 'http://127.0.0.1:18622';

// A page of orders picked at random: consecutive ids, whose customers are all
// different (customer_id = (id*7 % 100) + 1).
const randomPage = () => Math.floor(Math.random() * ORDER_PAGES);

function getJSON(path) {
  return new Promise((resolve, reject) => {
    const req = http.get(PRICING_URL + path, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${path}: ${res.statusCode}`));
        try { resolve(JSON.parse(body)); } catch (e) { reject(e); }
      });
    });
    req.on('error', reject);
  });
}

// The cart: CART_ITEMS different item ids from a random start.
function cartItems() {
  const start = 1 + Math.floor(Math.random() * 500);
  return Array.from({ length: CART_ITEMS }, (_, i) => start + i * 3);
}

const app = express();

app.get('/orders/nplus1', async (req, res, next) => {
  try {
    const orders = await Order.query().orderBy('id').limit(ORDERS_PER_PAGE).offset(randomPage() * ORDERS_PER_PAGE);
    for (const o of orders) {
      o.customer = await Customer.query().findById(o.customer_id); // one query per order
    }
    res.json({ orders: orders.length, customers: new Set(orders.map((o) => o.customer.id)).size });
  } catch (e) { next(e); }
});

app.get('/orders/joined', async (req, res, next) => {
  try {
    const orders = await Order.query().orderBy('id').limit(ORDERS_PER_PAGE).offset(randomPage() * ORDERS_PER_PAGE)
      .withGraphFetched('customer'); // one whereIn query for all customers
    res.json({ orders: orders.length, customers: new Set(orders.map((o) => o.customer.id)).size });
  } catch (e) { next(e); }
});

app.get('/cart/nplus1', async (req, res, next) => {
  try {
    let total = 0;
    for (const id of cartItems()) {
      total += (await getJSON(`/price/${id}`)).cents; // one call per item
    }
    res.json({ items: CART_ITEMS, total });
  } catch (e) { next(e); }
});

app.get('/cart/batched', async (req, res, next) => {
  try {
    const prices = await getJSON(`/prices?ids=${cartItems().join(',')}`);
    res.json({ items: prices.length, total: prices.reduce((s, p) => s + p.cents, 0) });
  } catch (e) { next(e); }
});

app.get('/health', (req, res) => res.send('ok'));

const port = Number(process.env.PORT || 18621);
app.listen(port, '127.0.0.1', () => console.log(`shop on ${port}`));
