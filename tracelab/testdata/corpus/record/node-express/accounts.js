// accounts: the same work done two ways, blocking the event loop and not.
// No database, no outgoing HTTP; a standalone Express service.
//   GET /hash/sync    crypto.pbkdf2Sync on the event loop (CPU, ~10 ms)
//   GET /hash/async   the same hash with crypto.pbkdf2, on libuv's thread pool, awaited
//   GET /exec/sync    child_process.execFileSync('sleep', ['0.01']): the loop waits ~10 ms
//   GET /exec/async   the same with execFile, promisified and awaited
//   GET /json         a small JSON object built in place (no I/O, well under 1 ms)
'use strict';
const crypto = require('node:crypto');
const { execFile, execFileSync } = require('node:child_process');
const { promisify } = require('node:util');
const express = require('express');

const execFileAsync = promisify(execFile);
const pbkdf2Async = promisify(crypto.pbkdf2);

// PBKDF2-HMAC-SHA256, 32-byte key: 40,000 iterations took 9.5-9.9 ms per hash
// (pbkdf2Sync, 100 in a row) on the recording machine.
const PASSWORD = 'correct horse battery staple';
const ITERATIONS = Number(process.env.HASH_ITERATIONS || 40000);
const KEYLEN = 32;
const DIGEST = 'sha256';

// A per-request salt, so that no two requests hash the same input.
let counter = 0;
const salt = () => `accounts-${process.pid}-${++counter}`;

const app = express();

app.get('/hash/sync', (req, res) => {
  const s = salt();
  const key = crypto.pbkdf2Sync(PASSWORD, s, ITERATIONS, KEYLEN, DIGEST);
  res.json({ salt: s, iterations: ITERATIONS, key: key.toString('hex') });
});

app.get('/hash/async', async (req, res) => {
  const s = salt();
  const key = await pbkdf2Async(PASSWORD, s, ITERATIONS, KEYLEN, DIGEST);
  res.json({ salt: s, iterations: ITERATIONS, key: key.toString('hex') });
});

app.get('/exec/sync', (req, res) => {
  execFileSync('sleep', ['0.01']);
  res.json({ slept_ms: 10 });
});

app.get('/exec/async', async (req, res) => {
  await execFileAsync('sleep', ['0.01']);
  res.json({ slept_ms: 10 });
});

app.get('/json', (req, res) => {
  const n = ++counter;
  res.json({ id: n, name: `account-${n}`, active: n % 2 === 0, tags: ['corpus', 'node-express'] });
});

app.get('/health', (req, res) => res.send('ok'));

const port = Number(process.env.PORT || 18624);
app.listen(port, '127.0.0.1', () => console.log(`accounts on ${port}, pbkdf2 ${ITERATIONS} iterations`));
