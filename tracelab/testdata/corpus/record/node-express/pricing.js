// pricing: the downstream service. GET /price/:id, one item; GET
// /prices?ids=1,2,3, a batch. No database: a price is computed from the id.
'use strict';
const express = require('express');

const app = express();
const price = (id) => ({ id, cents: 199 + ((id * 7919) % 9800) });

app.get('/price/:id', (req, res) => {
  const id = Number(req.params.id);
  if (!Number.isInteger(id) || id < 1) return res.status(400).json({ error: 'bad id' });
  res.json(price(id));
});

app.get('/prices', (req, res) => {
  const ids = String(req.query.ids || '').split(',').filter(Boolean).map(Number);
  if (!ids.length || ids.some((id) => !Number.isInteger(id) || id < 1)) return res.status(400).json({ error: 'bad ids' });
  res.json(ids.map(price));
});

app.get('/health', (req, res) => res.send('ok'));

const port = Number(process.env.PORT || 18622);
app.listen(port, '127.0.0.1', () => console.log(`pricing on ${port}`));
