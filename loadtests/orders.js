// Load for the eventloop and chatty-db scenarios: POST /orders, each order a
// known customer with 3 lines (3 lines make the chatty persistence's 7
// statements). Parameters (environment): TARGET, VUS, ITERATIONS or DURATION
// (or RATE), SUMMARY_FILE; CUSTOMERS and PRODUCTS bound the ids drawn (the
// seed data has 1000 customers and 100 products); GET_SHARE (0 to 1, default
// 0) turns that share of the requests into GET /orders/{id} of an order this
// VU created (each VU first creates one), for the case's GET/POST
// comparison: chatty-db's get variant sets it to 1.
import http from 'k6/http';
import { check } from 'k6';
import { labOptions, labSummary, target } from './lib/lab.js';

export const options = labOptions();

const base = target();
const customers = Number(__ENV.CUSTOMERS || 1000);
const products = Number(__ENV.PRODUCTS || 100);
const getShare = Number(__ENV.GET_SHARE || 0);
const params = { headers: { 'Content-Type': 'application/json' }, tags: { name: 'POST /orders' }, timeout: '60s' };
const created = [];

function pick(n) {
  return 1 + Math.floor(Math.random() * n);
}

function order() {
  // Three different products, so every order has exactly three lines to price.
  const ids = new Set();
  while (ids.size < 3) ids.add(pick(products));
  return { customerId: pick(customers), lines: [...ids].map((productId) => ({ productId, quantity: pick(3) })) };
}

export default function () {
  if (created.length > 0 && Math.random() < getShare) {
    const id = created[Math.floor(Math.random() * created.length)];
    const res = http.get(`${base}/orders/${id}`, { tags: { name: 'GET /orders/{id}' }, timeout: '60s' });
    check(res, { 'GET status is 200': (r) => r.status === 200 });
    return;
  }
  const res = http.post(`${base}/orders`, JSON.stringify(order()), params);
  if (check(res, { 'POST status is 201': (r) => r.status === 201 }) && created.length < 1000) {
    created.push(res.json('id'));
  }
}

export const handleSummary = labSummary;
