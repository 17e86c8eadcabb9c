// Loads db.sql into DATABASE_URL (run without the tracing, before the services).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');

(async () => {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query(fs.readFileSync(path.join(__dirname, 'db.sql'), 'utf8'));
  const { rows } = await client.query('SELECT (SELECT count(*) FROM customers) AS customers, (SELECT count(*) FROM orders) AS orders');
  console.log(`seeded: ${rows[0].customers} customers, ${rows[0].orders} orders`);
  await client.end();
})().catch((e) => { console.error(e.message); process.exit(1); });
